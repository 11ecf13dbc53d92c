/**
 * One workload measured on each system in turn (`--systems`), with the same publisher process (loader.ts) and the
 * same receiver: the engine stream (ES1, ES50) and W2. Each system gets a warm-up first (connections opened, code
 * compiled), then the measured events; its figures are prefixed with its name, and the ratios that the issue's
 * targets speak of close the list. EM (engine-media.ts) runs its two legs on Herald through the same `leg`, with
 * the few things it changes (LegOptions).
 */
import { cpuMeter } from './cpu.ts';
import type { Driven } from './drive.ts';
import { type EngineBodies, Loader, type RunSpec, type System } from './loader.ts';
import { eventSeries } from './publisher.ts';
import { waitForArrivals } from './receiver.ts';
import type { Figure, RunContext } from './run-context.ts';
import { latency } from './stats.ts';
import { SYSTEM_LABEL, startSystem } from './systems.ts';

export interface LegSpec {
  webhooks: number;
  /** Events measured, and events offered before them, not measured. */
  events: number;
  warmup: number;
  schedule: RunSpec['schedule'];
}

/** What a workload changes in a leg besides the spec; ES and W2 change nothing. */
export interface LegOptions {
  /** Prefix of the leg's figures instead of the system's name. */
  name?: string;
  /** Herald's environment beyond the bench's. */
  env?: Record<string, string>;
  /** WAHA's bodies to Herald's engine endpoint instead of Herald's own events (Herald only). */
  engine?: EngineBodies;
  /** Processes of the workload's own (EM's file server), measured beside the system's. */
  processes?: Record<string, number>;
  /** The receiver counts the measured deliveries by media status, into `Leg.media`. */
  inspect?: boolean;
}

export interface Leg {
  /** Measured events ÷ (first offer → last arrival). */
  eventsPerSecond: number;
  /** Measured events ÷ (first offer → last acknowledgement). */
  ackedPerSecond: number;
  arrival: { p50: number; p99: number };
  /** CPU seconds per event by process. */
  cpu: Record<string, number>;
  figures: Figure[];
  /** Measured deliveries by `payload.media.status`, when inspected. */
  media: Record<string, number>;
}

/** Receiver URLs of the workload's webhooks: one path each, so that each delivery is told apart. */
const webhookUrls = (ctx: RunContext, n: number) =>
  n === 1 ? [ctx.receiver.url] : Array.from({ length: n }, (_, k) => `${ctx.receiver.url}w${k}`);

export async function leg(ctx: RunContext, system: System, spec: LegSpec, o: LegOptions = {}): Promise<Leg> {
  const name = o.name ?? SYSTEM_LABEL[system];
  const deliveries = spec.events * spec.webhooks;
  const running = await startSystem(system, webhookUrls(ctx, spec.webhooks), { ...ctx, env: o.env });
  try {
    const { target } = running;
    const loader = await Loader.start(target.system === 'herald' ? { ...target, engine: o.engine } : target);
    try {
      const prefix = eventSeries();
      const offer = async (from: number, n: number, what: string) => {
        const work = loader.run({ prefix, from, n, schedule: spec.schedule });
        const label = () => `${ctx.label}: ${name}, ${what}`;
        const arrived = await waitForArrivals(ctx.receiver, n * spec.webhooks, label, work);
        return { driven: await work, lastAt: arrived.lastAt };
      };
      await ctx.receiver.reset();
      await offer(0, spec.warmup, 'warm-up');
      await ctx.receiver.reset(true, o.inspect);
      const processes = {
        ...running.processes,
        ...o.processes,
        publisher: loader.pid,
        receiver: ctx.receiver.pid,
      };
      const meter = cpuMeter(processes);
      const { driven, lastAt } = await offer(spec.warmup, spec.events, `${spec.events} events`);
      const cpuSeconds = meter();
      const tracked = await ctx.receiver.tracked();
      if (tracked.length < deliveries)
        throw new Error(`${name}: ${tracked.length} of ${deliveries} arrivals tracked`);
      const media = o.inspect ? await ctx.receiver.mediaStatuses() : {};
      return { ...summarise(name, spec, { driven, lastAt, prefix, tracked, cpuSeconds }), media };
    } finally {
      await loader.stop();
    }
  } finally {
    await running.stop();
  }
}

interface Measured {
  driven: Driven;
  /** The receiver's last arrival. */
  lastAt: number;
  prefix: string;
  /** [event id, first arrival] per delivery. */
  tracked: [string, number][];
  cpuSeconds: Record<string, number>;
}

function summarise(name: string, spec: LegSpec, m: Measured): Omit<Leg, 'media'> {
  const { driven, lastAt, prefix } = m;
  // Event ids are the prefix and the event's index; the measured events start at `warmup`.
  const sentAt = (id: string) => driven.sentAt[Number(id.slice(prefix.length)) - spec.warmup];
  const arrival = latency(m.tracked.map(([id, at]) => at - sentAt(id)));
  const ack = latency(driven.ackMs);
  const eventsPerSecond = spec.events / ((lastAt - driven.startedAt) / 1000);
  const ackedPerSecond = spec.events / ((driven.ackedAt - driven.startedAt) / 1000);
  const cpu = Object.fromEntries(Object.entries(m.cpuSeconds).map(([p, s]) => [p, s / spec.events]));
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  const figures: Figure[] = [{ name: `${name} events/s`, value: eventsPerSecond, unit: 'rate' }];
  if (spec.webhooks > 1) {
    const deliveries = eventsPerSecond * spec.webhooks;
    figures.push({ name: `${name} deliveries/s`, value: deliveries, unit: 'rate' });
  }
  if (spec.schedule.kind === 'closed')
    figures.push({ name: `${name} acknowledged events/s`, value: ackedPerSecond, unit: 'rate' });
  figures.push(
    { name: `${name} publish→202 p50 ms`, value: ack.p50, unit: 'ms' },
    { name: `${name} publish→202 p99 ms`, value: ack.p99, unit: 'ms' },
    { name: `${name} publish→arrival p50 ms`, value: arrival.p50, unit: 'ms' },
    { name: `${name} publish→arrival p99 ms`, value: arrival.p99, unit: 'ms' },
    ...Object.entries(cpu).map(
      ([p, s]): Figure => ({ name: `${name} CPU ms/event, ${p}`, value: s * 1000, unit: 'ms' }),
    ),
    { name: `${name} CPU ms/event, all`, value: total * 1000, unit: 'ms' },
  );
  return { eventsPerSecond, ackedPerSecond, arrival, cpu, figures };
}

/** The workload on each of `ctx.systems`, then Herald's ratios to the baselines that ran beside it. */
export async function onEachSystem(ctx: RunContext, spec: LegSpec): Promise<Figure[]> {
  const legs = new Map<System, Leg>();
  for (const system of ctx.systems) legs.set(system, await leg(ctx, system, spec));
  const figures = [...legs.values()].flatMap((l) => l.figures);
  const [herald, relay, raw, bullmq] = (['herald', 'relay', 'raw', 'bullmq'] as const).map((s) =>
    legs.get(s),
  );
  const ratio = (name: string, value: number): Figure => ({ name, value, unit: 'ratio' });
  if (herald && raw) {
    figures.push(ratio('Herald events/s ÷ raw', herald.eventsPerSecond / raw.eventsPerSecond));
    const heraldCpu = herald.cpu['Herald process'];
    figures.push(ratio('Herald process CPU ÷ raw publisher CPU', heraldCpu / raw.cpu.publisher));
  }
  // The floor: what a process that only takes and forwards each event costs, and reaches, on this machine.
  if (relay && raw) {
    figures.push(
      ratio('relay process CPU ÷ raw publisher CPU', relay.cpu['relay process'] / raw.cpu.publisher),
    );
  }
  if (herald && relay) {
    figures.push(
      ratio(
        'Herald process CPU ÷ relay process CPU',
        herald.cpu['Herald process'] / relay.cpu['relay process'],
      ),
    );
  }
  if (relay && bullmq) {
    figures.push(
      ratio('relay events/s ÷ BullMQ-AOF', relay.eventsPerSecond / bullmq.eventsPerSecond),
      ratio('relay arrival p99 ÷ BullMQ-AOF', relay.arrival.p99 / bullmq.arrival.p99),
    );
  }
  if (herald && bullmq) {
    figures.push(
      ratio('Herald events/s ÷ BullMQ-AOF', herald.eventsPerSecond / bullmq.eventsPerSecond),
      ratio('Herald arrival p50 ÷ BullMQ-AOF', herald.arrival.p50 / bullmq.arrival.p50),
      ratio('Herald arrival p99 ÷ BullMQ-AOF', herald.arrival.p99 / bullmq.arrival.p99),
    );
  }
  return figures;
}
