/**
 * `herald simulate`: publishes a session's realistic activity (src/domain/simulation.ts) through the public
 * ingest API at a steady rate, shows progress, and ends with a summary. Events go in batches, one per tick,
 * and the next batch waits for the previous answer, so a slow Herald slows the simulation instead of piling up.
 */
import { parseArgs } from 'node:util';
import { seededRandom } from '../domain/random.ts';
import { SessionSimulation, type SimulatedEvent } from '../domain/simulation.ts';
import { parseDuration, parseNumber, parseRate } from './args.ts';
import { type Command, UsageError } from './command.ts';

const help = `Usage: herald simulate --instance ins_… [--rate 20/s] [--duration 60s]
                       [--url http://127.0.0.1:8080] [--key KEY] [--seed N]

Publishes a session's realistic activity to an instance through the ingest API (POST …/events/batch):
session.status STARTING → SCAN_QR_CODE → WORKING, incoming messages (message and message.any) and outgoing
ones (message.any), acks SERVER → DEVICE → READ, reactions, edits, revokes, stories from status@broadcast,
media in every media.status, message.unknown with TIMEOUT and WORKER_DIED, groups, calls, labels, polls and
presence. The first round shows every event kind once; after it, kinds follow realistic weights.
Prints progress every second and a summary at the end (Ctrl-C ends early, with the summary).

Options:
  --instance ID    the instance (ins_…) to publish to (required)
  --rate R         events per second: 20/s (default), 300/m, or a bare number per second
  --duration D     how long to run: 60s (default), 500ms, 5m, 1h
  --url URL        Herald's base URL (default $HERALD_URL, else http://127.0.0.1:8080)
  --key KEY        an admin key or the instance's key (default $HERALD_API_KEY)
  --seed N         seed of the simulation, to replay the same activity`;

/** Largest batch the ingest API takes (SPEC §7). */
const MAX_BATCH = 1000;

interface Totals {
  events: number;
  deliveries: number;
  byKind: Map<string, number>;
}

async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      instance: { type: 'string' },
      rate: { type: 'string', default: '20/s' },
      duration: { type: 'string', default: '60s' },
      url: { type: 'string', default: process.env.HERALD_URL ?? 'http://127.0.0.1:8080' },
      key: { type: 'string', default: process.env.HERALD_API_KEY },
      seed: { type: 'string' },
    },
  });
  if (!values.instance?.startsWith('ins_'))
    throw new UsageError('--instance: an instance id (ins_…) is required');
  if (!values.key) throw new UsageError('--key: an API key is required (or set HERALD_API_KEY)');
  if (!URL.canParse(values.url)) throw new UsageError(`--url: must be a URL, got "${values.url}"`);
  const rate = parseRate('rate', values.rate);
  const durationMs = parseDuration('duration', values.duration);
  const seed =
    values.seed === undefined ? Date.now() >>> 0 : parseNumber('seed', values.seed, 0, 2 ** 32, true);

  const endpoint = new URL(`instances/${values.instance}/events/batch`, values.url.replace(/\/?$/, '/'));
  const simulation = new SessionSimulation(seededRandom(seed), Date.now);
  const totals: Totals = { events: 0, deliveries: 0, byKind: new Map() };
  const tickMs = Math.max(50, Math.min(1000, 1000 / rate));
  const started = Date.now();
  const pending: SimulatedEvent[] = [];
  let stopped = false;
  process.once('SIGINT', () => {
    stopped = true;
  });
  console.log(
    `Simulating ${values.instance} at ${rate}/s for ${durationMs / 1000}s (seed ${seed}) → ${values.url}`,
  );

  let lastProgress = started;
  while (!stopped) {
    const elapsed = Date.now() - started;
    if (elapsed >= durationMs) break;
    // Whole steps keep a message and its follow-ups together; a step may overshoot the target by a few events.
    const target = Math.floor((elapsed / 1000) * rate) + 1;
    while (totals.events + pending.length < target && pending.length < MAX_BATCH)
      pending.push(...simulation.next());
    const batch = pending.splice(0, MAX_BATCH);
    if (batch.length) await publish(endpoint, values.key, batch, totals);
    if (Date.now() - lastProgress >= 1000) {
      lastProgress = Date.now();
      console.log(progress(totals, Date.now() - started));
    }
    await new Promise((r) => setTimeout(r, tickMs));
  }
  console.log(summary(totals, Date.now() - started));
}

async function publish(endpoint: URL, key: string, events: SimulatedEvent[], totals: Totals): Promise<void> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events }),
  }).catch((err: Error) => {
    throw new SimulationFailed(`cannot reach Herald at ${endpoint.origin}: ${err.cause ?? err.message}`);
  });
  const body = (await res.json().catch(() => null)) as {
    results?: { deliveries: number }[];
    error?: { message: string };
  } | null;
  if (res.status !== 202 || !body?.results) {
    throw new SimulationFailed(`Herald answered ${res.status}: ${body?.error?.message ?? 'no JSON body'}`);
  }
  totals.events += events.length;
  for (const e of events) totals.byKind.set(e.event, (totals.byKind.get(e.event) ?? 0) + 1);
  for (const r of body.results) totals.deliveries += r.deliveries;
}

class SimulationFailed extends Error {}

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
  summary: "publish a session's realistic activity to an instance, for trying webhooks",
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
