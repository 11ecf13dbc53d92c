/**
 * `npm run bench`: starts what it needs on 127.0.0.1 (Herald in a child process on a temp DATA_DIR or on
 * DATABASE_URL, receivers and the raw baseline in processes of their own, for W2 and the engine stream a publisher
 * process and BullMQ on a redis-server of its own, for EM an engine file server), runs the workloads of issues 6
 * and 20 and EM (engine media) and prints a table of medians with each run's figure and the target.
 *
 * Usage: npm run bench -- [--workload W1,W4] [--events N] [--rate R] [--runs 3] [--store sqlite|postgres]
 *                         [--systems raw,herald,bullmq] [--profile DIR] [--warmup S] [--bulk-warmup N]
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freshData } from './fresh-data.ts';
import { HeraldProcess } from './herald-process.ts';
import type { System } from './loader.ts';
import { rawBaseline } from './raw.ts';
import { Receiver } from './receiver.ts';
import type { Figure, RunContext, Unit } from './run-context.ts';
import { clearProgress, median, megabytes, millis, progress, rate, ratio } from './stats.ts';
import { SYSTEM_LABEL } from './systems.ts';
import { WORKLOADS } from './workloads.ts';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The targets, by workload and figure (BENCHMARKS.md, Targets). */
const targets = (store: string): Record<string, { text: string; met: (v: number) => boolean }> => ({
  // On PostgreSQL (one worker) the target is 0.45 of raw; on the embedded store, 0.6.
  'W1 delivered / raw':
    store === 'postgres'
      ? { text: '≥ 0.45', met: (v) => v >= 0.45 }
      : { text: '≥ 0.60', met: (v) => v >= 0.6 },
  'W2 Herald publish→arrival p50 ms': { text: '≤ 1', met: (v) => v <= 1 },
  'W2 Herald publish→arrival p99 ms': { text: '≤ 5', met: (v) => v <= 5 },
  // Ratios to the baselines measured beside Herald in the same run.
  'W2 Herald process CPU ÷ raw publisher CPU': { text: '≤ 2', met: (v) => v <= 2 },
  // Tracing off (the bench's default): Herald's CPU per single event against the durable relay's.
  'W2 Herald process CPU ÷ relay process CPU': { text: '≤ 1.5', met: (v) => v <= 1.5 },
  'W2 Herald arrival p50 ÷ BullMQ-AOF': { text: '≤ 1', met: (v) => v <= 1 },
  'W2 Herald arrival p99 ÷ BullMQ-AOF': { text: '≤ 0.5', met: (v) => v <= 0.5 },
  'ES1 Herald events/s': { text: '≥ 5,000', met: (v) => v >= 5000 },
  'ES1 Herald events/s ÷ BullMQ-AOF': { text: '≥ 2', met: (v) => v >= 2 },
  'W3 healthy p99 ÷ raw': { text: '≤ 3', met: (v) => v <= 3 },
  'W4 delivered / W1': { text: '≥ 0.80', met: (v) => v >= 0.8 },
  'W-order chat / none': { text: '≥ 0.80', met: (v) => v >= 0.8 },
  'W-order chats out of order, chat': { text: '= 0', met: (v) => v === 0 },
  'W-order single chat out of order': { text: '= 0', met: (v) => v === 0 },
  'W4 peak RSS': { text: '≤ 300 MB', met: (v) => v <= 300 * 2 ** 20 },
});

const FORMATS: Record<Unit, (n: number) => string> = {
  rate,
  ratio,
  ms: millis,
  bytes: megabytes,
  count: rate,
};

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function positiveInteger(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) fail(`--${name}: must be a positive integer, got "${raw}"`);
  return n;
}

const { values } = parseArgs({
  options: {
    workload: { type: 'string', default: WORKLOADS.map((w) => w.id).join(',') },
    events: { type: 'string' },
    rate: { type: 'string' },
    warmup: { type: 'string' },
    'bulk-warmup': { type: 'string' },
    runs: { type: 'string', default: '3' },
    store: { type: 'string', default: 'sqlite' },
    systems: { type: 'string', default: 'raw,relay,herald,bullmq' },
    profile: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(
    `Usage: npm run bench -- [--workload ${WORKLOADS.map((w) => w.id).join(',')}] [--events N] [--rate R] [--runs 3]
                        [--store sqlite|postgres] [--systems raw,herald,bullmq] [--profile DIR] [--warmup S] [--bulk-warmup N]
--warmup:  W2's seconds at the rate before it measures, on every system (default 1)
--bulk-warmup N: W1 and W5 send N events (raw: N requests) first, not measured (default: none, both cold)
--systems: what W2 and ES1/ES50 run on, of raw, relay, herald, bullmq (BullMQ-AOF starts a redis-server of its
           own; the relay takes events as Herald does and forwards them, keeping nothing); EM runs on Herald only.`,
  );
  process.exit(0);
}
const selected = values.workload.split(',').map((id) => {
  const w = WORKLOADS.find((x) => x.id.toLowerCase() === id.trim().toLowerCase());
  return w ?? fail(`--workload: unknown workload "${id}" (known: ${WORKLOADS.map((x) => x.id).join(', ')})`);
});
if (values.store !== 'sqlite' && values.store !== 'postgres')
  fail(`--store: must be sqlite or postgres, got "${values.store}"`);
const systems = values.systems.split(',').map((name) => {
  const s = name.trim().toLowerCase() as System;
  return s in SYSTEM_LABEL
    ? s
    : fail(`--systems: unknown system "${name}" (known: ${Object.keys(SYSTEM_LABEL).join(', ')})`);
});
const runs = positiveInteger('runs', values.runs) as number;
const options = {
  events: positiveInteger('events', values.events),
  rate: positiveInteger('rate', values.rate),
  warmup: positiveInteger('warmup', values.warmup),
  bulkWarmup: positiveInteger('bulk-warmup', values['bulk-warmup']),
};
const databaseUrl = values.store === 'postgres' ? (process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL) : null;
const profileDir = values.profile ? resolve(values.profile) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });

/** Before anything is measured: does Herald start on this store at all? (It refuses a DATABASE_URL it cannot serve.) */
async function preflight(): Promise<void> {
  const data = await freshData(databaseUrl);
  try {
    const herald = await HeraldProcess.start({ ...data, dispatch: true });
    await herald.stop();
  } catch (err) {
    fail(
      `--store ${values.store}${databaseUrl ? ` (DATABASE_URL=${databaseUrl})` : ''}: ${(err as Error).message}`,
    );
  } finally {
    await data.remove();
  }
}
await preflight();

const RECEIVER_WARMUP = 20_000;

/** Figures by "W1 delivered/s", in run order. */
const results = new Map<string, { unit: Unit; values: number[] }>();
const receiver = await new Receiver('fast').start();
try {
  // The receiver is a Node process as well: its JIT's burst of compilation ~10,000 requests in (Herald's is half
  // a second of CPU) would land on the cores of the first run's figures. Warmed up here, not measured.
  progress(`warming up the receiver (${RECEIVER_WARMUP.toLocaleString('en')} requests)`);
  await rawBaseline(receiver.url, RECEIVER_WARMUP);
  for (let r = 1; r <= runs; r++) {
    for (const w of selected) {
      const ctx: RunContext = {
        ...options,
        databaseUrl,
        receiver,
        label: `run ${r}/${runs} ${w.id}`,
        profileDir,
        systems,
      };
      const figures: Figure[] = await w.run(ctx);
      for (const f of figures) {
        const key = `${w.id} ${f.name}`;
        const entry = results.get(key) ?? { unit: f.unit, values: [] };
        entry.values.push(f.value);
        results.set(key, entry);
      }
    }
  }
} finally {
  await receiver.stop();
}
clearProgress();

// W4 against W1 of the same invocation, run by run.
const w1 = results.get('W1 delivered/s');
const w4 = results.get('W4 delivered/s');
if (w1 && w4) {
  const values = w4.values.map((v, i) => v / w1.values[i]);
  results.set('W4 delivered / W1', { unit: 'ratio', values });
}

const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const cpu = cpus()[0]?.model ?? 'unknown CPU';
const lines = [
  `Herald benchmark — store ${values.store}, median of ${runs} run${runs === 1 ? '' : 's'} — ${date}`,
  `node ${process.version}, ${availableParallelism()} cores (${cpu}), ${megabytes(totalmem())} RAM, data in ${tmpdir()}`,
  `$ npm run bench -- ${process.argv.slice(2).join(' ')}`.trimEnd(),
  `W2 and ES on: ${systems.map((s) => SYSTEM_LABEL[s]).join(', ')}; CPU read from /proc for each process`,
  ...selected.map((w) => `${w.id}  ${w.title(options)}`),
  '',
  `| figure | median | runs | target |`,
  `|---|---:|---|---|`,
];
const TARGETS = targets(values.store as string);
for (const [key, { unit, values }] of results) {
  const f = FORMATS[unit];
  const m = median(values);
  const target = TARGETS[key];
  const verdict = target ? `${target.text} ${target.met(m) ? 'met' : '**not met**'}` : '';
  lines.push(`| ${key} | ${f(m)} | ${values.map(f).join(' / ')} | ${verdict} |`);
}
console.log(lines.join('\n'));
