/**
 * Broker destinations against the raw client: for RabbitMQ, NATS JetStream and Redis Streams in the same run, first
 * the library Herald publishes with, publishing the same deliveries straight to the broker with the broker's proof
 * awaited and Herald's per-webhook window of publishes outstanding (broker-raw.ts); then a fresh Herald (SQLite, or
 * PostgreSQL given --database-url / DATABASE_URL) with one instance and one enabled webhook to a destination on that
 * broker, fed W1's way (events in batches of 500 through POST …/events/batch, 4 batches in flight), timed from the
 * first publish until the broker counts all the events (polled: passive queue.declare, stream info, XLEN).
 * Afterwards Herald's delivery log must hold no pending and no failed delivery, and its metrics as many delivered.
 * The raw client runs just before and just after each Herald leg; Herald is compared with the mean of the two, so
 * that a machine whose speed drifts (shared with other test runs) skews the ratio less.
 * Every queue, stream and key is the run's own and is removed; the brokers are never stopped.
 *
 * Usage: npm run bench:brokers -- [--events 50000] [--runs 1] [--brokers amqp,nats,redis] [--window 64]
 *                                 [--database-url postgres://…] [--profile DIR]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import {
  BROKER_KINDS,
  BROKER_LABEL,
  BROKER_PORT,
  BrokerAdmin,
  type BrokerKind,
  type Destination,
} from './broker-destinations.ts';
import { type RawResult, rawBrokerBaseline } from './broker-raw.ts';
import { treeCpuSeconds } from './cpu.ts';
import { ADMIN_KEY } from './herald-process.ts';
import { wallNow } from './payloads.ts';
import { messageEvents } from './publisher.ts';
import { median, progress, rate, ratio } from './stats.ts';
import { openHerald } from './systems.ts';

/** W1's batches (bench/workloads.ts): 500 events a request, 4 requests in flight. */
const BATCH = 500;
const BATCH_IN_FLIGHT = 4;
/**
 * Herald's cap of attempts in flight per webhook (src/delivery/dispatcher.ts, maxInFlightPerWebhook: 64; the process
 * cap MAX_IN_FLIGHT in src/app.ts is 512): one webhook never has more publishes outstanding than this.
 */
const HERALD_WINDOW_PER_WEBHOOK = 64;
/** No broker count moved for this long: the leg failed. */
const STALL_MS = 60_000;

const fail = (message: string): never => {
  console.error(message);
  process.exit(2);
};

function positiveInteger(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) fail(`--${name}: must be a positive integer, got "${raw}"`);
  return n;
}

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '1' },
    brokers: { type: 'string', default: BROKER_KINDS.join(',') },
    window: { type: 'string', default: String(HERALD_WINDOW_PER_WEBHOOK) },
    'database-url': { type: 'string' },
    'poll-ms': { type: 'string', default: '20' },
    profile: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    `Usage: npm run bench:brokers -- [--events 50000] [--runs 1] [--brokers amqp,nats,redis] [--window 64]
                              [--database-url postgres://…] [--poll-ms 20] [--profile DIR]
Herald's store: embedded SQLite, or PostgreSQL with --database-url (or DATABASE_URL).
--window: the raw client's publishes outstanding (default: Herald's in-flight cap per webhook, 64).
--profile DIR: a CPU profile of each Herald process (node --cpu-prof) in DIR.`,
  );
  process.exit(0);
}
const events = positiveInteger('events', values.events);
const runs = positiveInteger('runs', values.runs);
const window = positiveInteger('window', values.window);
const pollMs = positiveInteger('poll-ms', values['poll-ms']);
const kinds = values.brokers.split(',').map((k) => {
  const kind = k.trim().toLowerCase() as BrokerKind;
  return BROKER_KINDS.includes(kind)
    ? kind
    : fail(`--brokers: unknown broker "${k}" (known: amqp, nats, redis)`);
});
const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL ?? null;
const profileDir = values.profile ? resolve(values.profile) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

/** The broker's server process, for its CPU (read from /proc like every other figure); null if ss cannot tell. */
function brokerPid(kind: BrokerKind): number | null {
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${BROKER_PORT[kind]}`], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
const cpuOf = (pid: number | null) => (pid === null ? Number.NaN : treeCpuSeconds(pid));

/** The whole machine's CPU ticks, busy and all (/proc/stat): how busy it was between two readings, 0..1. */
function machineTicks(): { busy: number; all: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const all = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: all - f[3] - f[4], all }; // idle and iowait are not busy
}
function machineMeter(): () => number {
  const before = machineTicks();
  return () => {
    const after = machineTicks();
    return (after.busy - before.busy) / Math.max(1, after.all - before.all);
  };
}

type RawFigures = RawResult & { perSecond: number; brokerCpu: number; machineBusy: number };

interface Leg {
  kind: BrokerKind;
  /** The raw client's passes just before and just after Herald's leg; Herald is compared with their mean. */
  rawBefore: RawFigures;
  rawAfter: RawFigures;
  rawPerSecond: number;
  herald: HeraldFigures;
}

interface HeraldFigures {
  /** From the first publish until the broker counted them all. */
  perSecond: number;
  /** Events acknowledged by the API per second (first publish to last 202). */
  ingestPerSecond: number;
  ingestMs: number;
  totalMs: number;
  /** In the broker when the last batch was acknowledged. */
  inBrokerAtIngestEnd: number;
  /** Into the broker per second while ingest ran, and after it ended. */
  duringIngestPerSecond: number;
  afterIngestPerSecond: number;
  /** The machine's CPU busy (all cores, 0..1) during Herald's leg. */
  machineBusy: number;
  /** First message in the broker, after the first publish. */
  firstInBrokerMs: number;
  /** Mean of Herald's attempt durations (its herald_attempt_duration_seconds histogram). */
  meanAttemptMs: number;
  /** Attempts in flight on average while delivering: the attempts' summed durations over the delivery span. */
  meanInFlight: number;
  attempts: number;
  delivered: number;
  heraldCpu: number;
  brokerCpu: number;
  /** In the broker once Herald's log had nothing pending. */
  finalCount: number;
}

async function get(base: string, path: string): Promise<string> {
  const res = await request(base + path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

/** Sums of the samples of metric `name` whose labels match `labels` (a substring), from Prometheus text. */
function metric(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (labels && !rest.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function rawLeg(admin: BrokerAdmin, kind: BrokerKind, label: string): Promise<RawFigures> {
  const dest = await admin.destination(kind, 'raw');
  const broker = brokerPid(kind);
  try {
    progress(`${label}: raw client, ${events} messages, window ${window}`);
    const before = cpuOf(broker);
    const machine = machineMeter();
    const r = await rawBrokerBaseline({
      where: { kind, name: dest.name, url: dest.url },
      total: events,
      window,
    });
    const machineBusy = machine();
    const brokerCpu = cpuOf(broker) - before;
    if (r.failed > 0) throw new Error(`${label}: raw client: ${r.failed} publishes failed (${r.error})`);
    const counted = await dest.count();
    if (counted !== events)
      throw new Error(`${label}: raw client: the broker holds ${counted}, not ${events}`);
    return { ...r, perSecond: events / (r.elapsedMs / 1000), brokerCpu, machineBusy };
  } finally {
    await dest.remove();
  }
}

/** Polls the broker's count until it holds `n`; the samples' times are wallNow(). */
async function waitInBroker(dest: Destination, n: number, label: () => string, failed: () => unknown) {
  const samples: { at: number; count: number }[] = [];
  let movedAt = wallNow();
  for (;;) {
    const count = await dest.count();
    const at = wallNow();
    if (samples.length === 0 || count !== samples[samples.length - 1].count) movedAt = at;
    samples.push({ at, count });
    if (count >= n) return samples;
    const err = failed();
    if (err) throw err;
    if (at - movedAt > STALL_MS) throw new Error(`${label()}: stalled at ${count}/${n} in the broker`);
    progress(`${label()}, ${count}/${n} in the broker`);
    await sleep(pollMs);
  }
}

async function heraldLeg(admin: BrokerAdmin, kind: BrokerKind, label: string): Promise<HeraldFigures> {
  const dest = await admin.destination(kind, 'herald');
  const broker = brokerPid(kind);
  const h = await openHerald({ databaseUrl, profileDir });
  try {
    const base = h.herald.url;
    const instance = await h.publisher.createInstance('bench brokers');
    await h.publisher.createWebhook(instance, dest.url);
    const list = messageEvents(events);
    const cpuBefore = { herald: cpuOf(h.herald.pid), broker: cpuOf(broker) };
    const machine = machineMeter();
    let acked = 0;
    let publishError: unknown = null;
    const publishing = h.publisher.publishBatches(instance, list, {
      batch: BATCH,
      inFlight: BATCH_IN_FLIGHT,
      onAck: (k) => {
        acked += k;
      },
    });
    publishing.catch((err) => {
      publishError = err;
    });
    const samples = await waitInBroker(
      dest,
      events,
      () => `${label}: Herald, ${acked}/${events} acknowledged`,
      () => publishError,
    );
    const { startedAt, ackedAt } = await publishing;
    const machineBusy = machine();
    const heraldCpu = cpuOf(h.herald.pid) - cpuBefore.herald;
    const brokerCpu = cpuOf(broker) - cpuBefore.broker;
    const lastAt = samples[samples.length - 1].at;
    const firstAt = samples.find((s) => s.count > 0)?.at ?? lastAt;
    const atIngestEnd = samples.filter((s) => s.at <= ackedAt).pop()?.count ?? 0;

    // Herald's own account: nothing pending or failed in its log, every delivery delivered.
    for (let waited = 0; ; waited += 100) {
      const pending = JSON.parse(await get(base, `/instances/${instance}/deliveries?status=pending&limit=1`));
      if (pending.deliveries.length === 0) break;
      if (waited > 30_000) throw new Error(`${label}: Herald still has deliveries pending`);
      await sleep(100);
    }
    const failedPage = JSON.parse(await get(base, `/instances/${instance}/deliveries?status=failed&limit=1`));
    if (failedPage.deliveries.length > 0) throw new Error(`${label}: Herald's log has failed deliveries`);
    const text = await get(base, '/metrics');
    const delivered = metric(text, 'herald_deliveries_total', 'outcome="delivered"');
    const attempts = metric(text, 'herald_attempts_total');
    const durationSum = metric(text, 'herald_attempt_duration_seconds_sum');
    const durationCount = metric(text, 'herald_attempt_duration_seconds_count');
    if (delivered !== events)
      throw new Error(`${label}: Herald's metrics count ${delivered} delivered, not ${events}`);
    const finalCount = await dest.count();
    if (finalCount !== events) throw new Error(`${label}: the broker holds ${finalCount}, not ${events}`);
    await h.publisher.deleteInstance(instance);

    const totalMs = lastAt - startedAt;
    return {
      perSecond: events / (totalMs / 1000),
      ingestPerSecond: events / ((ackedAt - startedAt) / 1000),
      ingestMs: ackedAt - startedAt,
      totalMs,
      inBrokerAtIngestEnd: atIngestEnd,
      duringIngestPerSecond: atIngestEnd / ((ackedAt - startedAt) / 1000),
      afterIngestPerSecond:
        lastAt > ackedAt ? (events - atIngestEnd) / ((lastAt - ackedAt) / 1000) : Number.NaN,
      machineBusy,
      firstInBrokerMs: firstAt - startedAt,
      meanAttemptMs: (durationSum / durationCount) * 1000,
      meanInFlight: (durationSum * 1000) / (lastAt - firstAt),
      attempts,
      delivered,
      heraldCpu,
      brokerCpu,
      finalCount,
    };
  } finally {
    await h.stop();
    await dest.remove();
  }
}

const ms = (x: number) => `${Math.round(x).toLocaleString('en-US')} ms`;
const secs = (x: number) => (Number.isNaN(x) ? '–' : `${x.toFixed(1)} s`);

const pct = (x: number) => `${Math.round(x * 100)}%`;

function printRun(run: number, legs: Leg[]): void {
  console.log(`\n### Run ${run} of ${runs}\n`);
  console.log(
    '| broker | raw msg/s before / after Herald | raw msg/s (mean) | Herald events/s | Herald / raw |',
  );
  console.log('|---|--:|--:|--:|--:|');
  for (const { kind, rawBefore, rawAfter, rawPerSecond, herald: x } of legs) {
    console.log(
      `| ${BROKER_LABEL[kind]} | ${rate(rawBefore.perSecond)} / ${rate(rawAfter.perSecond)} | ${rate(rawPerSecond)} | ` +
        `${rate(x.perSecond)} | ${ratio(x.perSecond / rawPerSecond)} |`,
    );
  }
  console.log(
    '\n| broker | Herald ingest events/s (ingest of total) | in broker at ingest end | into broker/s during / after ingest | ' +
      'first in broker | raw mean ack | Herald mean attempt | Herald mean in flight | Herald CPU | ' +
      'broker CPU raw / Herald | machine busy raw / Herald |',
  );
  console.log('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const { kind, rawBefore, rawAfter, herald: x } of legs) {
    const meanAck = (rawBefore.meanAckMs + rawAfter.meanAckMs) / 2;
    const rawBroker = (rawBefore.brokerCpu + rawAfter.brokerCpu) / 2;
    const rawBusy = (rawBefore.machineBusy + rawAfter.machineBusy) / 2;
    console.log(
      `| ${BROKER_LABEL[kind]} | ${rate(x.ingestPerSecond)} (${ms(x.ingestMs)} of ${ms(x.totalMs)}) | ` +
        `${x.inBrokerAtIngestEnd.toLocaleString('en-US')} | ${rate(x.duringIngestPerSecond)} / ${rate(x.afterIngestPerSecond)} | ` +
        `${ms(x.firstInBrokerMs)} | ${meanAck.toFixed(2)} ms | ${x.meanAttemptMs.toFixed(2)} ms | ` +
        `${x.meanInFlight.toFixed(1)} | ${secs(x.heraldCpu)} | ${secs(rawBroker)} / ${secs(x.brokerCpu)} | ` +
        `${pct(rawBusy)} / ${pct(x.machineBusy)} |`,
    );
  }
  const first = legs[0]?.rawBefore;
  if (first) {
    console.log(
      `\nBody ${first.bodyBytes} B, headers ${first.headerBytes} B; attempts by Herald: ` +
        legs.map((l) => `${BROKER_LABEL[l.kind]} ${l.herald.attempts}`).join(', '),
    );
  }
}

const store = databaseUrl ? `PostgreSQL (${databaseUrl.replace(/\/\/[^@/]*@/, '//…@')})` : 'embedded SQLite';
console.log(`$ npm run bench:brokers -- ${process.argv.slice(2).join(' ')}`.trimEnd());
console.log(
  `${events.toLocaleString('en-US')} events per broker; raw window ${window} (Herald's in-flight cap per webhook: ` +
    `${HERALD_WINDOW_PER_WEBHOOK}); Herald on ${store}; batches of ${BATCH}, ${BATCH_IN_FLIGHT} in flight; ` +
    `broker counts polled every ${pollMs} ms`,
);

const admin = await BrokerAdmin.connect();
const ratios = new Map<BrokerKind, number[]>(kinds.map((k) => [k, []]));
const rates = new Map<BrokerKind, { raw: number[]; herald: number[] }>(
  kinds.map((k) => [k, { raw: [], herald: [] }]),
);
try {
  for (let run = 1; run <= runs; run++) {
    const legs: Leg[] = [];
    for (const kind of kinds) {
      const label = `run ${run}/${runs} ${BROKER_LABEL[kind]}`;
      const rawBefore = await rawLeg(admin, kind, `${label} (before)`);
      const herald = await heraldLeg(admin, kind, label);
      const rawAfter = await rawLeg(admin, kind, `${label} (after)`);
      const rawPerSecond = (rawBefore.perSecond + rawAfter.perSecond) / 2;
      legs.push({ kind, rawBefore, rawAfter, rawPerSecond, herald });
      ratios.get(kind)?.push(herald.perSecond / rawPerSecond);
      rates.get(kind)?.raw.push(rawPerSecond);
      rates.get(kind)?.herald.push(herald.perSecond);
    }
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    printRun(run, legs);
  }
  console.log(`\n### Medians over ${runs} run${runs === 1 ? '' : 's'}\n`);
  console.log('| broker | raw msg/s | Herald events/s | Herald / raw |');
  console.log('|---|--:|--:|--:|');
  for (const kind of kinds) {
    const r = rates.get(kind) as { raw: number[]; herald: number[] };
    console.log(
      `| ${BROKER_LABEL[kind]} | ${rate(median(r.raw))} | ${rate(median(r.herald))} | ` +
        `${ratio(median(ratios.get(kind) as number[]))} |`,
    );
  }
} finally {
  await admin.close();
}
