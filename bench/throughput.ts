/**
 * Throughput benchmark, first workload: one instance, one enabled signed webhook, N message events.
 * Per run: (1) a raw baseline — the same signed POSTs sent straight to the receiver by a child process;
 * (2) Herald ingest — events acknowledged (202, committed) per second through POST .../events/batch;
 * (3) Herald delivered/s — from the first publish to the last arrival at the receiver.
 * The receiver is a child process; Herald runs in this process, as test/support/herald.ts starts it.
 * Usage: npm run bench -- [--events 20000] [--runs 3] [--batch 500]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { MAX_BATCH } from '../src/api/routes/events.ts';
import { startHerald } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { deliveryBody, messagePayload, SECRET, wallNow } from './peers.ts';

const RAW_CONCURRENCY = 64;
const PUBLISH_IN_FLIGHT = 4;
/** A phase that makes no progress for this long has hung: fail rather than wait forever. */
const STALL_MS = 30_000;
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

const opt = (fallback: string) => ({ type: 'string', default: fallback }) as const;
const { values } = parseArgs({ options: { events: opt('20000'), runs: opt('3'), batch: opt('500') } });
const [EVENTS, RUNS, BATCH] = (['events', 'runs', 'batch'] as const).map((name) => {
  const [n, max] = [Number(values[name]), name === 'batch' ? MAX_BATCH : Number.MAX_SAFE_INTEGER];
  if (Number.isInteger(n) && n >= 1 && n <= max) return n;
  console.error(`--${name}: must be an integer from 1 to ${max}, got "${values[name]}"`);
  return process.exit(2);
});

type Stats = { count: number; lastAt: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

let printedAt = 0;
/** One line rewritten in place on a terminal; into a file or pipe, at most a line a second. */
function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${text}\x1b[K`);
  else if (Date.now() - printedAt >= 1000) {
    process.stderr.write(`${text}\n`);
    printedAt = Date.now();
  }
}

function spawnPeer(...args: string[]): ChildProcess {
  // process.execPath: the children run on the same Node 24 as this process, whatever `node` is on PATH.
  return spawn(process.execPath, [join(import.meta.dirname, 'peers.ts'), ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child ${child.pid} exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
  });
}

function ask(receiver: ChildProcess, command: 'stats' | 'reset'): Promise<Stats> {
  const reply = nextMessage<Stats>(receiver);
  receiver.send(command);
  return reply;
}

/** Polls the receiver (progress line, stall check) until EVENTS requests arrived; fails as soon as `work` fails. */
async function waitForArrivals(receiver: ChildProcess, work: Promise<unknown>, label: () => string) {
  // Never resolves; rejects when `work` does. The no-op catch keeps a late failure from being unhandled.
  const failure = work.then(() => new Promise<never>(() => {}));
  failure.catch(() => {});
  let seen = -1;
  let movedAt = Date.now();
  for (;;) {
    const { count } = await ask(receiver, 'stats');
    progress(`${label()}, ${count}/${EVENTS} arrived`);
    if (count >= EVENTS) return;
    if (count !== seen) [seen, movedAt] = [count, Date.now()];
    else if (Date.now() - movedAt > STALL_MS) throw new Error(`no progress for ${STALL_MS} ms at ${count}`);
    await Promise.race([failure, sleep(200)]);
  }
}

async function rawBaseline(run: string, receiver: ChildProcess, url: string): Promise<number> {
  await ask(receiver, 'reset');
  const client = spawnPeer('raw', url, String(EVENTS), String(RAW_CONCURRENCY));
  const exited = new Promise((resolve) => client.once('exit', resolve));
  const result = nextMessage<{ elapsedMs: number; failed: number }>(client);
  await Promise.all([result, waitForArrivals(receiver, result, () => `${run} raw`)]);
  await exited;
  const { elapsedMs, failed } = await result;
  if (failed > 0) throw new Error(`raw baseline: ${failed} requests not answered 200`);
  return EVENTS / (elapsedMs / 1000);
}

async function heraldRun(run: string, receiver: ChildProcess, url: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const env = { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, ADMIN_API_KEY: ADMIN_KEY };
  const herald = await startHerald(
    // The per-key ingest limit is off: the bench measures the engine, not the limiter.
    loadConfig({ ...env, ALLOW_PRIVATE_DESTINATIONS: 'true', LOG_LEVEL: 'silent', RATE_LIMIT_INGEST: '0' }),
  );
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: PUBLISH_IN_FLIGHT });
  try {
    const api = async (path: string, body: unknown, expected: number) => {
      const res = await request(herald.url + path, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode !== expected)
        throw new Error(`POST ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    const { instance_id } = await api('/instances', { name: 'bench' }, 201);
    const hooks = `/instances/${instance_id}/webhooks`;
    const webhook = { destination_url: url, events: ['message'], client_sign_secret: SECRET };
    const { webhook_id } = await api(hooks, webhook, 201);
    await api(`${hooks}/${webhook_id}/enabled`, { enabled: true }, 200);

    // Request bodies are built before the clock starts: only Herald's work is timed, not the publisher's.
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      event: 'message',
      payload: messagePayload(i),
    }));
    const batches: string[] = [];
    for (let i = 0; i < EVENTS; i += BATCH)
      batches.push(JSON.stringify({ events: events.slice(i, i + BATCH) }));
    await ask(receiver, 'reset');
    let [acked, next] = [0, 0];
    const started = wallNow();
    const publisher = async () => {
      while (next < batches.length) {
        const i = next++;
        await api(`/instances/${instance_id}/events/batch`, batches[i], 202);
        acked += Math.min(BATCH, EVENTS - i * BATCH);
      }
    };
    const publishing = Promise.all(Array.from({ length: PUBLISH_IN_FLIGHT }, publisher)).then(wallNow);
    const label = () => `${run} herald: ${acked}/${EVENTS} acknowledged`;
    const [ackedAt] = await Promise.all([publishing, waitForArrivals(receiver, publishing, label)]);
    const { count, lastAt } = await ask(receiver, 'stats');
    if (count !== EVENTS) console.error(`\nnote: the receiver got ${count} requests for ${EVENTS} events`);
    return { ingest: EVENTS / ((ackedAt - started) / 1000), delivered: EVENTS / ((lastAt - started) / 1000) };
  } finally {
    await agent.close();
    await herald.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The middle value; with an even count, the mean of the two middle ones. */
const median = (xs: number[], s = [...xs].sort((a, b) => a - b)) =>
  (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;

const receiver = spawnPeer('receiver');
try {
  const { port } = await nextMessage<{ port: number }>(receiver);
  const url = `http://127.0.0.1:${port}/`;
  const [raw, ingest, delivered]: number[][] = [[], [], []];
  for (let r = 1; r <= RUNS; r++) {
    raw.push(await rawBaseline(`run ${r}/${RUNS}`, receiver, url));
    const figures = await heraldRun(`run ${r}/${RUNS}`, receiver, url);
    ingest.push(figures.ingest);
    delivered.push(figures.delivered);
  }
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  const ratio = delivered.map((d, i) => d / raw[i]);
  const row = (name: string, xs: number[], f: (n: number) => string) =>
    `${name.padEnd(24)}${f(median(xs)).padStart(10)}     ${xs.map(f).join(' / ')}`;
  const bodyBytes = Buffer.byteLength(deliveryBody(0, Date.now()));
  const runs = `median of ${RUNS} run${RUNS === 1 ? '' : 's'}`;
  console.log(
    [
      `Herald throughput — ${EVENTS} events, batches of ${BATCH}, ${runs} (node ${process.version}, ${availableParallelism()} cores)`,
      `$ ${[process.execPath, ...process.execArgv, ...process.argv.slice(1)].join(' ')}`,
      `body ~${bodyBytes} B; raw: ${RAW_CONCURRENCY} in flight on one keep-alive undici Agent; Herald: ${PUBLISH_IN_FLIGHT} batches in flight, 1 webhook, SQLite in ${tmpdir()}`,
      `${'figure'.padEnd(24)}${'median'.padStart(10)}     runs`,
      row('raw undici POST/s', raw, fmt),
      row('ingest events/s', ingest, fmt),
      row('delivered/s', delivered, fmt),
      row('delivered / raw', ratio, (n) => n.toFixed(2)),
    ].join('\n'),
  );
} finally {
  receiver.kill();
}
