/**
 * Sources against the HTTP batch ingest, in the same run and the same Herald: for each broker (RabbitMQ, NATS
 * JetStream, Redis Streams), first N events through POST …/events/batch (W1's way: batches of 500, 4 in flight), timed
 * until the last 202; then N messages waiting in a queue of the broker's, consumed by a source created for them,
 * its rate read from Herald's metrics, polled, between the first events counted and the last count short of N
 * (start-up and the poll's own delay left out, below). Neither instance has webhooks: only ingest is
 * measured. Then the raw consumer (source-raw.ts): the same messages in a fresh queue, read by the bare client
 * library, the ceiling of any source. Reported: events/s of each, the source's rate over the HTTP rate (target
 * ≥ 0.8), over the raw consumer's, and the raw consumer's over the HTTP rate.
 * Every queue, stream and group is the run's own (test/sources/rig.ts) and is removed; the brokers are never stopped.
 *
 * Usage: npm run bench:sources -- [--events 20000] [--runs 1] [--brokers amqp,nats,redis] [--prefetch N]
 *                                 [--database-url postgres://…] [--profile DIR]
 * With --profile, each Herald writes a CPU profile (node --cpu-prof) into DIR when it stops.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { loadConfig } from '../src/config.ts';
import { KINDS, type Kind, natsConsumerFirst, testQueue } from '../test/sources/rig.ts';
import { treeCpuSeconds } from './cpu.ts';
import { ADMIN_KEY } from './herald-process.ts';
import { wallNow } from './payloads.ts';
import { messageEvents } from './publisher.ts';
import { fill, rawConsume } from './source-raw.ts';
import { median } from './stats.ts';
import { openHerald } from './systems.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '1' },
    brokers: { type: 'string', default: KINDS.join(',') },
    'database-url': { type: 'string' },
    prefetch: { type: 'string' },
    profile: { type: 'string' },
  },
});
const N = Number(values.events);
const RUNS = Number(values.runs);
const brokers = values.brokers.split(',') as Kind[];
const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL ?? null;
const profileDir = values.profile ? resolve(values.profile) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ source?: { source_id: string }; text?: string }> {
  const res = await request(base + path, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return text.startsWith('{') ? JSON.parse(text) : { text };
}

async function ingestedBySource(base: string, id: string): Promise<number> {
  const text = (await api(base, 'GET', '/metrics')).text ?? '';
  const m = new RegExp(`herald_source_messages_total\\{source_id="${id}",result="ingested"\\} (\\d+)`).exec(
    text,
  );
  return m ? Number(m[1]) : 0;
}

const results: Record<
  string,
  {
    http: number[];
    source: number[];
    raw: number[];
    httpCpu: number[];
    sourceCpu: number[];
    rawCpu: number[];
  }
> = {};
// The default is Herald's own (SOURCE_PREFETCH unset), so that the raw consumer reads with the source's window.
const prefetch = Number(values.prefetch ?? loadConfig({}).sourcePrefetch);
for (let run = 0; run < RUNS; run++) {
  for (const kind of brokers) {
    const system = await openHerald({
      databaseUrl,
      profileDir,
      env: values.prefetch ? { SOURCE_PREFETCH: values.prefetch } : undefined,
    });
    const base = system.herald.url;
    const q = await testQueue(kind);
    try {
      // HTTP: W1's batches.
      const httpInstance = await system.publisher.createInstance('bench-http');
      const httpCpu = treeCpuSeconds(system.herald.pid);
      const http = await system.publisher.publishBatches(httpInstance, messageEvents(N), {
        batch: 500,
        inFlight: 4,
      });
      const httpRate = N / ((http.ackedAt - http.startedAt) / 1000);
      const httpCpuMs = ((treeCpuSeconds(system.herald.pid) - httpCpu) * 1000) / N;
      // Source: N waiting, then consumed.
      if (kind === 'nats') await natsConsumerFirst(q);
      await fill(q, messageEvents(N));
      const instance = await system.publisher.createInstance('bench-source');
      const made = await api(base, 'POST', '/sources', {
        url: q.url(),
        format: 'herald',
        instance_id: instance,
      });
      const id = made.source?.source_id ?? '';
      // Timed from the first events counted, not from the POST: a new source waits for the runner's next look at
      // the sources table (once a second) and its broker connection, which is start-up, not ingest throughput.
      let first = await ingestedBySource(base, id);
      while (first === 0) {
        await sleep(5);
        first = await ingestedBySource(base, id);
      }
      const startedAt = wallNow();
      const sourceCpu = treeCpuSeconds(system.herald.pid);
      // Timed to the last poll that still saw fewer than N, at the count it saw: the poll that sees all N comes up
      // to 50 ms after the last event, a tenth of a 20,000-event leg (the HTTP leg is timed to its last 202).
      let seen = { at: startedAt, count: first };
      for (;;) {
        const count = await ingestedBySource(base, id);
        if (count >= N) break;
        seen = { at: wallNow(), count };
        await sleep(50);
      }
      const sourceRate =
        seen.count > first
          ? (seen.count - first) / ((seen.at - startedAt) / 1000)
          : (N - first) / ((wallNow() - startedAt) / 1000);
      const sourceCpuMs = ((treeCpuSeconds(system.herald.pid) - sourceCpu) * 1000) / (N - first);
      await api(base, 'DELETE', `/sources/${id}`);
      // The raw consumer: the same messages again, in a queue of their own, read by the bare client library.
      const rq = await testQueue(kind);
      try {
        if (kind === 'nats') await natsConsumerFirst(rq);
        await fill(rq, messageEvents(N));
        const rawCpu = process.cpuUsage();
        const rawRate = await rawConsume(rq, N, prefetch);
        const { user, system: sys } = process.cpuUsage(rawCpu);
        const rawCpuMs = (user + sys) / 1000 / N;
        results[kind] ??= { http: [], source: [], raw: [], httpCpu: [], sourceCpu: [], rawCpu: [] };
        results[kind].rawCpu.push(rawCpuMs);
        results[kind].httpCpu.push(httpCpuMs);
        results[kind].sourceCpu.push(sourceCpuMs);
        results[kind].http.push(httpRate);
        results[kind].source.push(sourceRate);
        results[kind].raw.push(rawRate);
        console.log(
          `${kind}: HTTP batch ${Math.round(httpRate)} events/s, source ${Math.round(sourceRate)}, ` +
            `raw consumer ${Math.round(rawRate)}; source/HTTP ${(sourceRate / httpRate).toFixed(2)}, ` +
            `source/raw ${(sourceRate / rawRate).toFixed(2)}, raw/HTTP ${(rawRate / httpRate).toFixed(2)}; ` +
            `CPU ms/event: Herald HTTP ${httpCpuMs.toFixed(3)}, Herald source ${sourceCpuMs.toFixed(3)}, ` +
            `raw consumer ${rawCpuMs.toFixed(3)}`,
        );
      } finally {
        await rq.remove();
      }
    } finally {
      await q.remove();
      await system.stop();
    }
  }
}
console.log(
  `\n${N} events per leg, ${RUNS} run(s), store ${databaseUrl ? 'PostgreSQL' : 'SQLite'}, ` +
    `SOURCE_PREFETCH ${values.prefetch ?? `${prefetch} (default)`}; medians:`,
);
for (const [kind, r] of Object.entries(results)) {
  const h = median(r.http);
  const s = median(r.source);
  const w = median(r.raw);
  console.log(
    `  ${kind.padEnd(6)} HTTP ${Math.round(h)} ev/s  source ${Math.round(s)} ev/s  raw consumer ${Math.round(w)} ev/s` +
      `  source/HTTP ${(s / h).toFixed(2)}  source/raw ${(s / w).toFixed(2)}  raw/HTTP ${(w / h).toFixed(2)}` +
      `  CPU ms/event: Herald HTTP ${median(r.httpCpu).toFixed(3)} Herald source ${median(r.sourceCpu).toFixed(3)}` +
      ` raw consumer ${median(r.rawCpu).toFixed(3)}`,
  );
}
process.exit(0);
