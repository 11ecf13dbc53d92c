/**
 * `herald simulate`: publishes a session's realistic activity (src/simulation/) to Herald, shows progress, and ends
 * with a summary. It opens with every kind of the catalog at once, then keeps the rate. The next publication waits
 * for the previous answers, so a slow Herald slows the simulation instead of piling up.
 */
import { parseArgs } from 'node:util';
import { seededRandom } from '../domain/random.ts';
import { MediaServer } from '../simulation/media-server.ts';
import {
  type Publisher,
  publishBatches,
  publishToEvolution,
  publishToWaha,
  SimulationFailed,
} from '../simulation/publishers.ts';
import { SessionSimulation, type SimulatedEvent } from '../simulation/simulation.ts';
import { parseDuration, parseNumber, parseRate } from './args.ts';
import { type Command, UsageError } from './command.ts';

const help = `Usage: herald simulate --instance ins_… [--engine herald|waha|evolution] [--rate 20/s] [--duration 60s]
                       [--url http://127.0.0.1:8080] [--key KEY] [--seed N]
                       [--hmac-key K] [--media-api-key K] [--media-port P]

Publishes a session's realistic activity to an instance: session.status STARTING → SCAN_QR_CODE → WORKING,
incoming messages (message and message.any) and outgoing ones (message.any), acks SERVER → DEVICE → READ,
reactions, edits, revokes, stories from status@broadcast, media in every state, groups, calls, labels, polls,
presence, event answers and engine events. It opens with every kind at once, whatever the rate; then kinds
follow realistic weights. Prints progress every second and a summary at the end (Ctrl-C ends early).

  --engine herald  (default) Herald's own format, in batches: POST …/events/batch
  --engine waha    what WAHA sends to its webhook, one request per event: POST …/engine/waha. Media is served
                   by a small file server this command starts on 127.0.0.1, as WAHA's own would serve it. Herald
                   downloads engine media only under ENGINE_MEDIA_PREFIXES: give the file server a port and start
                   Herald with that prefix, e.g. --media-port 3001 and
                   ENGINE_MEDIA_PREFIXES=http://127.0.0.1:3001/api/files/ (and, with --media-api-key K,
                   ENGINE_MEDIA_HEADERS='X-Api-Key: K'). Outside it, media on 127.0.0.1 is refused.
  --engine evolution  what Evolution API sends to an instance's webhook, one request per event:
                   POST …/engine/evolution, media inline as Evolution's base64 (its webhook's base64 setting)

Options:
  --instance ID        the instance (ins_…) to publish to (required)
  --rate R             events per second: 20/s (default), 300/m, or a bare number per second
  --duration D         how long to run: 60s (default), 500ms, 5m, 1h
  --url URL            Herald's base URL (default $HERALD_URL, else $HERALD, else http://127.0.0.1:8080)
  --key KEY            an admin key or the instance's key (default $HERALD_API_KEY, else $KEY)
  --seed N             seed of the simulation, to replay the same activity
  --hmac-key K         waha: sign each body as WAHA does (X-Webhook-Hmac), for an instance with an engine HMAC key
  --media-api-key K    waha: the file server answers 401 without X-Api-Key: K (set ENGINE_MEDIA_HEADERS in Herald)
  --media-port P       waha: the file server's port (default: any free one, which no ENGINE_MEDIA_PREFIXES names)

HERALD and KEY are the names the README's walk-through exports: in its terminal, --url and --key can be left out.`;

const ENGINES = ['herald', 'waha', 'evolution'];
const ENGINE_NAMES: Record<string, string> = {
  herald: 'Herald events',
  waha: 'WAHA',
  evolution: 'Evolution API',
};

interface Totals {
  events: number;
  deliveries: number;
  byKind: Map<string, number>;
}

/**
 * Where to publish, and with which key, when --url and --key are not given: HERALD_URL and HERALD_API_KEY, or else
 * HERALD and KEY, which the README's walk-through exports. An empty variable counts as unset.
 */
export function envDefaults(env: Record<string, string | undefined>): {
  url: string;
  key: string | undefined;
} {
  return {
    url: env.HERALD_URL || env.HERALD || 'http://127.0.0.1:8080',
    key: env.HERALD_API_KEY || env.KEY || undefined,
  };
}

async function run(args: string[]): Promise<void> {
  const defaults = envDefaults(process.env);
  const { values } = parseArgs({
    args,
    options: {
      instance: { type: 'string' },
      engine: { type: 'string', default: 'herald' },
      rate: { type: 'string', default: '20/s' },
      duration: { type: 'string', default: '60s' },
      url: { type: 'string', default: defaults.url },
      key: { type: 'string', ...(defaults.key ? { default: defaults.key } : {}) },
      seed: { type: 'string' },
      'hmac-key': { type: 'string' },
      'media-api-key': { type: 'string' },
      'media-port': { type: 'string', default: '0' },
    },
  });
  if (!values.instance?.startsWith('ins_'))
    throw new UsageError('--instance: an instance id (ins_…) is required');
  if (!values.key) throw new UsageError('--key: an API key is required (or set HERALD_API_KEY, or KEY)');
  if (!URL.canParse(values.url)) throw new UsageError(`--url: must be a URL, got "${values.url}"`);
  if (!ENGINES.includes(values.engine)) {
    throw new UsageError(`--engine: must be herald, waha or evolution, got "${values.engine}"`);
  }
  const rate = parseRate('rate', values.rate);
  const durationMs = parseDuration('duration', values.duration);
  const seed =
    values.seed === undefined ? Date.now() >>> 0 : parseNumber('seed', values.seed, 0, 2 ** 32, true);
  const base = values.url.replace(/\/?$/, '/');
  const target = { base, instance: values.instance, key: values.key };

  let media: MediaServer | null = null;
  let publish: Publisher;
  if (values.engine === 'waha') {
    const port = parseNumber('media-port', values['media-port'], 0, 65535, true);
    media = await MediaServer.start(values['media-api-key'] ?? null, port);
    publish = publishToWaha(target, media, values['hmac-key'] ?? null);
  } else if (values.engine === 'evolution') {
    publish = publishToEvolution(target);
  } else {
    publish = publishBatches(target);
  }
  const simulation = new SessionSimulation(seededRandom(seed), Date.now);
  const totals: Totals = { events: 0, deliveries: 0, byKind: new Map() };
  const tickMs = Math.max(50, Math.min(1000, 1000 / rate));
  let stopped = false;
  process.once('SIGINT', () => {
    stopped = true;
  });
  console.log(
    `Simulating ${values.instance} as ${ENGINE_NAMES[values.engine]} at ${rate}/s for ` +
      `${durationMs / 1000}s (seed ${seed}) → ${values.url}` +
      (media
        ? `\nEngine file server on ${media.base}; Herald downloads from it with ` +
          `ENGINE_MEDIA_PREFIXES=${media.base}/api/files/`
        : ''),
  );

  let simulated = 0;
  const send = async (events: SimulatedEvent[]) => {
    const { sent, deliveries } = await publish(events);
    simulated += events.length;
    totals.deliveries += deliveries;
    totals.events += sent.length;
    for (const kind of sent) totals.byKind.set(kind, (totals.byKind.get(kind) ?? 0) + 1);
  };
  const started = Date.now();
  try {
    await send(simulation.opening());
    let lastProgress = Date.now();
    const pending: SimulatedEvent[] = [];
    const opened = simulated;
    while (!stopped && Date.now() - started < durationMs) {
      // Whole steps keep a message and its follow-ups together; a step may overshoot the target by a few events.
      const target = opened + Math.floor(((Date.now() - started) / 1000) * rate) + 1;
      while (simulated + pending.length < target && pending.length < 1000) pending.push(...simulation.next());
      if (pending.length) await send(pending.splice(0, 1000));
      if (Date.now() - lastProgress >= 1000) {
        lastProgress = Date.now();
        console.log(progress(totals, Date.now() - started));
      }
      await new Promise((r) => setTimeout(r, tickMs));
    }
  } finally {
    await media?.close();
  }
  console.log(summary(totals, Date.now() - started));
  if (media) {
    const { served, refused } = media.stats;
    console.log(
      `Engine file server: ${served} files downloaded by Herald, ${refused} refused for want of X-Api-Key.`,
    );
    if (served + refused === 0) {
      console.log(
        `Herald asked for no file: start it with ENGINE_MEDIA_PREFIXES=${media.base}/api/files/ ` +
          '(and this command with the same --media-port) to let it download from here.',
      );
    }
  }
}

function progress(t: Totals, ms: number): string {
  const s = ms / 1000;
  return `  ${s.toFixed(1).padStart(6)}s  ${String(t.events).padStart(7)} events  (${(t.events / s).toFixed(1)}/s)  ${t.deliveries} deliveries queued`;
}

function summary(t: Totals, ms: number): string {
  const kinds = [...t.byKind.entries()].sort((a, b) => b[1] - a[1]);
  const width = Math.max(0, ...kinds.map(([k]) => k.length));
  return [
    `Published ${t.events} events in ${(ms / 1000).toFixed(1)}s (${(t.events / (ms / 1000)).toFixed(1)}/s); ${t.deliveries} deliveries queued.`,
    'Events by kind:',
    ...kinds.map(([kind, n]) => `  ${kind.padEnd(width)}  ${n}`),
  ].join('\n');
}

export const simulateCommand: Command = {
  name: 'simulate',
  summary:
    "publish a session's realistic activity to an instance (Herald's format, WAHA's or Evolution API's), for trying webhooks",
  help,
  async run(args) {
    try {
      await run(args);
    } catch (err) {
      if (!(err instanceof SimulationFailed)) throw err;
      console.error(`herald simulate: ${err.message}`);
      process.exit(1);
    }
  },
};
