/**
 * One measurement of the scale bench: on a fresh database of the bench's PostgreSQL, one `--role api` Herald in
 * this namespace and N `--role worker` Heralds, each in a network namespace of its own (a host of its own); events
 * spread over one signed webhook per instance, delivered to the receiver on the database host's address. After a
 * warm-up, it reads what the delivery of `events` events cost: PostgreSQL's server processes' CPU (/proc), its
 * statements by kind (pg_stat_statements), and the Herald processes' CPU.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMeter } from './cpu.ts';
import { closedLoop, type Send } from './drive.ts';
import { HeraldProcess } from './herald-process.ts';
import type { HostNetwork } from './netns.ts';
import type { PgCluster } from './pg-cluster.ts';
import {
  type ByKind,
  costliestStatements,
  INGEST_ROLE,
  resetStatements,
  type StatementCost,
  statementsByKind,
  WORKER_ROLE,
} from './pg-statements.ts';
import { eventSeries, messageEvent, Publisher } from './publisher.ts';
import { type Receiver, waitForArrivals } from './receiver.ts';

/** One key for every process of a database: signing secrets are sealed with it (docs/scale-out.md). */
const SECRET_KEY = 'b'.repeat(64);
/** Single events: 64 connections in a closed loop (an engine's webhook); batches: 4 in flight (as W1). */
const SINGLE_CONNECTIONS = 64;
const BATCHES_IN_FLIGHT = 4;

export interface ScaleSpec {
  workers: number;
  events: number;
  warmup: number;
  webhooks: number;
  /** Events per request: 1 is POST …/events (the engine stream), more is POST …/events/batch. */
  batch: number;
  /** How many of the costliest statements to keep (0: none). */
  costliest: number;
}

export interface ScaleResult {
  deliveredPerSecond: number;
  seconds: number;
  /** CPU seconds during the measured events, by process group. */
  cpu: { postgres: number; api: number; workers: number };
  statements: ByKind;
  /** The costliest statements by execution time (`--statements`). */
  costliest: StatementCost[];
}

/**
 * Offers events `from` … `from + n - 1` round robin over the instances, one per request or in batches; resolves
 * when all are acknowledged, with the time of the first offer.
 */
async function publish(
  publisher: Publisher,
  instances: string[],
  spec: ScaleSpec,
  prefix: string,
  from: number,
  n: number,
) {
  if (spec.batch === 1) {
    const send: Send = (i) =>
      publisher.publish(instances[i % instances.length], JSON.stringify(messageEvent(prefix, from + i)));
    return (await closedLoop(n, SINGLE_CONNECTIONS, send)).startedAt;
  }
  const batches = Math.ceil(n / spec.batch);
  const send: Send = (b) => {
    const size = Math.min(spec.batch, n - b * spec.batch);
    const events = Array.from({ length: size }, (_, k) => messageEvent(prefix, from + b * spec.batch + k));
    return publisher.publishBatch(instances[b % instances.length], JSON.stringify({ events }));
  };
  return (await closedLoop(batches, BATCHES_IN_FLIGHT, send)).startedAt;
}

export async function measureScale(
  spec: ScaleSpec,
  env: { pg: PgCluster; net: HostNetwork; receiver: Receiver; label: string },
): Promise<ScaleResult> {
  const { pg, net, receiver } = env;
  const database = `herald_scale_${spec.workers}_${Date.now().toString(36)}`;
  const admin = pg.connect();
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-scale-'));
  const processes: HeraldProcess[] = [];
  try {
    await admin.unsafe(`CREATE DATABASE ${database}`);
    const start = (role: 'api' | 'worker', user: string, netns?: string) =>
      HeraldProcess.start({
        dataDir,
        databaseUrl: pg.url(database, user),
        dispatch: true,
        role,
        netns,
        env: { SECRET_KEY },
      });
    const api = await start('api', INGEST_ROLE);
    processes.push(api);
    // One after another: each migrates at start (under an advisory lock), and the first creates the schema.
    const workers: HeraldProcess[] = [];
    for (let k = 0; k < spec.workers; k++)
      workers.push(await start('worker', WORKER_ROLE, net.namespaces[k]));
    processes.push(...workers);

    const publisher = new Publisher(api.url, SINGLE_CONNECTIONS);
    const instances: string[] = [];
    for (let i = 0; i < spec.webhooks; i++) {
      const instance = await publisher.createInstance(`scale ${i}`);
      await publisher.createWebhook(instance, `${receiver.url}hook/${i}`);
      instances.push(instance);
    }
    const prefix = eventSeries();
    const offer = async (from: number, n: number, what: string) => {
      const published = publish(publisher, instances, spec, prefix, from, n);
      const label = () => `${env.label}: ${spec.workers} worker(s), ${what}`;
      const { lastAt } = await waitForArrivals(receiver, n, label, published);
      return { startedAt: await published, lastAt };
    };
    await receiver.reset();
    await offer(0, spec.warmup, 'warm-up');
    await receiver.reset();
    await resetStatements(admin);
    const meter = cpuMeter({
      postgres: pg.pid,
      api: api.pid,
      ...Object.fromEntries(workers.map((w, k) => [`worker ${k}`, w.pid])),
    });
    const { startedAt, lastAt } = await offer(spec.warmup, spec.events, `${spec.events} events`);
    const cpu = meter();
    const statements = await statementsByKind(admin, database);
    const costliest = spec.costliest > 0 ? await costliestStatements(admin, database, spec.costliest) : [];
    await publisher.close();
    const seconds = (lastAt - startedAt) / 1000;
    const workersCpu = Object.entries(cpu)
      .filter(([name]) => name.startsWith('worker'))
      .reduce((sum, [, s]) => sum + s, 0);
    return {
      deliveredPerSecond: spec.events / seconds,
      seconds,
      cpu: { postgres: cpu.postgres, api: cpu.api, workers: workersCpu },
      statements,
      costliest,
    };
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await admin.end({ timeout: 1 });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
