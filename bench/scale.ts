/**
 * `npm run bench:scale`: Herald's scale-out (issue 20, item 6), measured where this machine allows. It builds a
 * private network (netns.ts: a bridge and one namespace per worker host), starts a PostgreSQL cluster of its own on
 * the bridge's address with pg_stat_statements (pg-cluster.ts), and a receiver there; then for each worker count it
 * runs one api process and N worker processes on a fresh database (scale-run.ts) and prints, per count:
 * deliveries/s, PostgreSQL's CPU per 1,000 delivered events and the deliveries/s one PostgreSQL core carries at
 * that cost, the statements per event by kind, and the Herald processes' CPU per event. Everything it started is
 * stopped and removed at the end, or on Ctrl-C.
 *
 * Usage: npm run bench:scale -- [--workers 1,2,4] [--events 20000] [--webhooks 20] [--batch 1] [--statements N]
 *   (as root). --statements N also prints, per worker count, the N statements that took the most execution time.
 */
import { availableParallelism, cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { HostNetwork } from './netns.ts';
import { PgCluster } from './pg-cluster.ts';
import { createRoles, KINDS } from './pg-statements.ts';
import { Receiver } from './receiver.ts';
import { measureScale, type ScaleResult, type ScaleSpec } from './scale-run.ts';
import { clearProgress, millis, rate } from './stats.ts';

const WARMUP_EVENTS = 2_000;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const opt = (fallback: string) => ({ type: 'string', default: fallback }) as const;
const { values } = parseArgs({
  options: {
    workers: opt('1,2,4'),
    events: opt('20000'),
    webhooks: opt('20'),
    batch: opt('1'),
    statements: opt('0'),
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    'Usage: npm run bench:scale -- [--workers 1,2,4] [--events 20000] [--webhooks 20] [--batch 1] [--statements N]',
  );
  process.exit(0);
}
const counts = values.workers.split(',').map(Number);
const [events, webhooks, batch, costliest] = [
  values.events,
  values.webhooks,
  values.batch,
  values.statements,
].map(Number);
if (![events, webhooks, batch, ...counts].every((n) => Number.isInteger(n) && n >= 1))
  fail('--events, --webhooks, --batch and --workers (a comma-separated list) take positive integers');
if (!Number.isInteger(costliest) || costliest < 0) fail('--statements takes a count');
if (process.getuid?.() !== 0) fail('bench:scale creates network namespaces: run it as root');

const net = HostNetwork.create(Math.max(...counts));
let pg: PgCluster | undefined;
let receiver: Receiver | undefined;
const teardown = async () => {
  await receiver?.stop();
  await pg?.stop();
  net.destroy();
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void teardown().finally(() => process.exit(130)));
}

const results: [number, ScaleResult][] = [];
let version = '';
try {
  pg = await PgCluster.start(net.serverAddress, net.cidr);
  const admin = pg.connect();
  await createRoles(admin);
  version = (await admin`SHOW server_version`)[0].server_version;
  await admin.end();
  receiver = await new Receiver('fast', net.serverAddress).start();
  for (const workers of counts) {
    const spec: ScaleSpec = {
      workers,
      events,
      webhooks,
      batch,
      costliest,
      warmup: Math.min(WARMUP_EVENTS, events),
    };
    results.push([workers, await measureScale(spec, { pg, net, receiver, label: `bench:scale` })]);
  }
} finally {
  await teardown();
}
clearProgress();

const per = (n: number, of: number) => (of > 0 ? n / of : 0);
const fixed = (n: number) => n.toFixed(2);
/** Statements per event run from thousandths (batched ingest) to several: two significant digits below 1. */
const count = (n: number) => (n >= 1 || n === 0 ? n.toFixed(2) : n.toPrecision(2));
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const how =
  batch === 1 ? 'one event per request, 64 connections in a closed loop' : `batches of ${batch}, 4 in flight`;
const lines = [
  `Herald scale-out on PostgreSQL — ${date}`,
  `node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), PostgreSQL ${version} (the bench's own cluster)`,
  `$ npm run bench:scale -- ${process.argv.slice(2).join(' ')}`.trimEnd(),
  `${events} events over ${webhooks} webhooks (${how}) to 1 api process; each worker in a network namespace of its`,
  `own on ${net.cidr}, PostgreSQL and the receiver at ${net.serverAddress}. CPU from /proc; statements from pg_stat_statements.`,
  '',
  '| workers | delivered/s | PG CPU-s / 1k events | PG cores busy | deliveries/s per PG core | statements/event ingest / claim / outcome / other | PG exec ms / 1k events ingest / claim / outcome (waits included) | api CPU ms/event | workers CPU ms/event |',
  '|---:|---:|---:|---:|---:|---|---|---:|---:|',
];
for (const [workers, r] of results) {
  const pgPerThousand = per(r.cpu.postgres * 1000, events);
  const s = r.statements;
  lines.push(
    `| ${workers} | ${rate(r.deliveredPerSecond)} | ${fixed(pgPerThousand)} | ${fixed(per(r.cpu.postgres, r.seconds))} | ${rate(per(1000, pgPerThousand))} | ${KINDS.map((k) => count(per(s[k].statements, events))).join(' / ')} | ${(['ingest', 'claim', 'outcome'] as const).map((k) => millis(per(s[k].execMs * 1000, events))).join(' / ')} | ${fixed(per(r.cpu.api * 1000, events))} | ${fixed(per(r.cpu.workers * 1000, events))} |`,
  );
}
console.log(lines.join('\n'));
for (const [workers, r] of results.filter(([, r]) => r.costliest.length > 0)) {
  const rows = r.costliest.map(
    (c) =>
      `| ${c.role} | ${c.calls} | ${count(c.rows / events)} | ${millis((c.execMs * 1000) / events)} | ${millis(c.execMs / c.calls)} | ${count(c.walRecords / events)} | ${count(c.blocksHit / events)} | \`${c.query.replaceAll('|', '\\|')}\` |`,
  );
  console.log(
    [
      '',
      `${workers} worker(s): the costliest statements, per event (pg_stat_statements)`,
      '| role | calls | rows/event | exec ms / 1k events | ms/call | WAL records/event | buffers hit/event | statement |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...rows,
    ].join('\n'),
  );
}
