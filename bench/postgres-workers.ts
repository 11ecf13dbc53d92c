/**
 * Scale-out benchmark on PostgreSQL: delivered/s with 1, 2 and 3 worker processes (`serve --role worker`) fed by one
 * `serve --role api` process, all real child processes over one fresh schema of DATABASE_URL. The events are spread
 * over `--webhooks` instances of one signed webhook each; delivered/s runs from the first publish to the last
 * arrival at the receiver (a child process answering 200 at once).
 * Usage: DATABASE_URL=postgres://… npm run bench:postgres -- [--events 20000] [--webhooks 20] [--workers 1,2,3]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dropSchema, scratchSchema } from '../test/support/postgres.ts';
import { type ChildHerald, spawnHerald } from '../test/support/spawn.ts';
import { SECRET, wallNow } from './payloads.ts';

const BATCH = 500;
const PUBLISH_IN_FLIGHT = 4;
const STALL_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The receiver child: counts requests once their body has arrived; answers { count, lastAt } to any message. */
function receiver(): void {
  let [count, lastAt] = [0, 0];
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      [count, lastAt] = [count + 1, wallNow()];
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  process.on('message', () => process.send?.({ count, lastAt }));
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
}

function ask<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send('stats');
  });
}

async function run(workers: number, events: number, webhooks: number, url: string, rx: ChildProcess) {
  const { schema, url: databaseUrl } = await scratchSchema();
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-pg-'));
  const env = { DATABASE_URL: databaseUrl, SECRET_KEY: 'b'.repeat(64) };
  const procs: ChildHerald[] = [];
  try {
    const api = await spawnHerald(dataDir, env, 60_000, ['--role', 'api']);
    procs.push(api);
    procs.push(
      ...(await Promise.all(
        Array.from({ length: workers }, () => spawnHerald(dataDir, env, 60_000, ['--role', 'worker'])),
      )),
    );
    const post = async (path: string, body: unknown, expected: number) => {
      const res = await api.request('POST', path, body);
      if (res.status !== expected) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const instances: string[] = [];
    for (let i = 0; i < webhooks; i++) {
      const { instance_id } = await post('/instances', { name: `bench ${i}` }, 201);
      const hooks = `/instances/${instance_id}/webhooks`;
      const hook = { destination_url: `${url}hook/${i}`, events: ['message'], client_sign_secret: SECRET };
      const { webhook_id } = await post(hooks, hook, 201);
      await post(`${hooks}/${webhook_id}/enabled`, { enabled: true }, 200);
      instances.push(instance_id);
    }
    const batches: { path: string; body: unknown; size: number }[] = [];
    for (let i = 0, b = 0; i < events; i += BATCH, b++) {
      const size = Math.min(BATCH, events - i);
      const list = Array.from({ length: size }, (_, k) => ({
        event: 'message',
        payload: {
          id: `false_491701234567@c.us_${i + k}`,
          from: '491701234567@c.us',
          from_phone: '491701234567',
          fromMe: false,
          body: `Hello ${i + k}, see you at six at the station`,
          hasMedia: false,
        },
      }));
      batches.push({
        path: `/instances/${instances[b % webhooks]}/events/batch`,
        body: { events: list },
        size,
      });
    }
    const { count: before } = await ask<{ count: number }>(rx);
    const started = wallNow();
    let next = 0;
    let ackedAt = 0;
    const publishing = Promise.all(
      Array.from({ length: PUBLISH_IN_FLIGHT }, async () => {
        while (next < batches.length) {
          const { path, body } = batches[next++];
          await post(path, body, 202);
        }
      }),
    ).then(() => {
      ackedAt = wallNow();
    });
    let failed: unknown = null;
    publishing.catch((err) => {
      failed = err;
    });
    let [seen, movedAt] = [-1, Date.now()];
    for (;;) {
      if (failed) throw failed;
      const { count, lastAt } = await ask<{ count: number; lastAt: number }>(rx);
      const arrived = count - before;
      process.stderr.write(`\r${workers} worker(s): ${arrived}/${events} arrived\x1b[K`);
      if (arrived >= events) {
        await publishing;
        process.stderr.write('\r\x1b[K');
        return {
          ingest: events / ((ackedAt - started) / 1000),
          delivered: events / ((lastAt - started) / 1000),
        };
      }
      if (arrived !== seen) [seen, movedAt] = [arrived, Date.now()];
      else if (Date.now() - movedAt > STALL_MS)
        throw new Error(`no progress for ${STALL_MS} ms at ${arrived}`);
      await sleep(200);
    }
  } finally {
    await Promise.all(procs.map((p) => p.kill('SIGTERM')));
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  }
}

async function main(): Promise<void> {
  const opt = (fallback: string) => ({ type: 'string', default: fallback }) as const;
  const { values } = parseArgs({
    options: { events: opt('20000'), webhooks: opt('20'), workers: opt('1,2,3') },
  });
  const events = Number(values.events);
  const webhooks = Number(values.webhooks);
  const counts = values.workers.split(',').map(Number);
  if (![events, webhooks, ...counts].every((n) => Number.isInteger(n) && n >= 1)) {
    console.error('--events, --webhooks and --workers (a comma-separated list) take positive integers');
    process.exit(2);
  }
  if (!process.env.DATABASE_URL) {
    console.error('DATABASE_URL: must be set, e.g. postgres://postgres@127.0.0.1:5432/test');
    process.exit(2);
  }
  const rx = fork(import.meta.filename, ['receiver'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const { port } = await new Promise<{ port: number }>((resolve) =>
      rx.once('message', (m) => resolve(m as never)),
    );
    const lines = [];
    for (const n of counts) {
      const f = await run(n, events, webhooks, `http://127.0.0.1:${port}/`, rx);
      lines.push(
        `${String(n).padStart(7)}  ${Math.round(f.delivered).toLocaleString('en-US').padStart(11)}  ${Math.round(f.ingest).toLocaleString('en-US').padStart(9)}`,
      );
    }
    console.log(
      [
        `Herald on PostgreSQL — ${events} events over ${webhooks} signed webhooks, 1 api process (node ${process.version}, ${availableParallelism()} cores)`,
        `$ ${[process.execPath, ...process.argv.slice(1)].join(' ')}`,
        'workers  delivered/s  ingest/s',
        ...lines,
      ].join('\n'),
    );
  } finally {
    rx.kill();
  }
}

if (process.argv[2] === 'receiver') receiver();
else await main();
