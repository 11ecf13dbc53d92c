import { FILE_BYTES } from '../src/simulation/media-server.ts';
import { engineMedia } from './engine-media.ts';
import { freshData } from './fresh-data.ts';
import { HeraldProcess } from './herald-process.ts';
import { onEachSystem } from './legs.ts';
import { CHATS, orderedDelivery, SINGLE_CHAT_EVENTS } from './ordering.ts';
import { wallNow } from './payloads.ts';
import { messageEvents, Publisher } from './publisher.ts';
import { rawBaseline, rawIsolation } from './raw.ts';
import { Receiver, waitForArrivals } from './receiver.ts';
import type { Figure, RunContext, Workload } from './run-context.ts';
import { latency, progress } from './stats.ts';
import { openHerald } from './systems.ts';

/** Raw baselines need no more requests than this to reach their steady rate. */
const RAW_REQUESTS = 50_000;
const BATCH = 500;
const BATCH_IN_FLIGHT = 4;

/** A Herald process on fresh data and the bench's client of its API, for the duration of `fn`. */
async function withHerald<T>(
  ctx: RunContext,
  fn: (h: HeraldProcess, p: Publisher) => Promise<T>,
): Promise<T> {
  const { herald, publisher, stop } = await openHerald(ctx);
  try {
    return await fn(herald, publisher);
  } finally {
    await stop();
  }
}

/**
 * Publishes `n` events in batches to one instance and waits until `n × webhooks` deliveries arrived. With
 * `ctx.bulkWarmup`, as many events (and raw requests) go first to an instance of their own, not measured.
 */
async function throughput(ctx: RunContext, n: number, webhooks: number): Promise<Figure[]> {
  const total = n * webhooks;
  const warmup = ctx.bulkWarmup ?? 0;
  progress(`${ctx.label}: raw baseline`);
  const raw = await rawBaseline(ctx.receiver.url, Math.min(total, RAW_REQUESTS), warmup);
  return withHerald(ctx, async (_, publisher) => {
    const bulk = async (events: number, what: string) => {
      const instance = await publisher.createInstance(what);
      for (let k = 0; k < webhooks; k++)
        await publisher.createWebhook(
          instance,
          webhooks === 1 ? ctx.receiver.url : `${ctx.receiver.url}w${k}`,
        );
      await ctx.receiver.reset();
      let acked = 0;
      const publishing = publisher.publishBatches(instance, messageEvents(events), {
        batch: BATCH,
        inFlight: BATCH_IN_FLIGHT,
        onAck: (k) => {
          acked += k;
        },
      });
      const label = () => `${ctx.label}: ${what}, ${acked}/${events} events acknowledged`;
      const { lastAt } = await waitForArrivals(ctx.receiver, events * webhooks, label, publishing);
      const published = await publishing;
      await publisher.deleteInstance(instance);
      return { lastAt, ...published };
    };
    if (warmup > 0) await bulk(warmup, 'warm-up');
    const { lastAt, startedAt, ackedAt } = await bulk(n, 'bench');
    const delivered = total / ((lastAt - startedAt) / 1000);
    return [
      { name: 'raw undici POST/s', value: raw, unit: 'rate' },
      { name: 'ingest events/s', value: n / ((ackedAt - startedAt) / 1000), unit: 'rate' },
      { name: 'delivered/s', value: delivered, unit: 'rate' },
      { name: 'delivered / raw', value: delivered / raw, unit: 'ratio' },
    ];
  });
}

/** Publishes events one by one at `perSecond` to a fresh instance, returns publish→arrival latencies (ms). */
async function paced(ctx: RunContext, publisher: Publisher, n: number, perSecond: number, what: string) {
  const instance = await publisher.createInstance(what);
  await publisher.createWebhook(instance, ctx.receiver.url);
  // One second at the rate first, not measured: connections opened, code warmed up, as in steady service.
  const warmup = messageEvents(perSecond);
  await ctx.receiver.reset();
  await publisher.publishPaced(instance, warmup, perSecond);
  await waitForArrivals(ctx.receiver, warmup.length, () => `${ctx.label}: warm-up`);
  await ctx.receiver.reset(true);
  let sent = 0;
  const events = messageEvents(n);
  const publishing = publisher.publishPaced(instance, events, perSecond, (k) => {
    sent = k;
  });
  const label = () => `${ctx.label}: ${sent}/${n} ${what} events published at ${perSecond}/s`;
  const { lastAt } = await waitForArrivals(ctx.receiver, n, label, publishing);
  const { sentAt, acked } = await publishing;
  const arrivals = await ctx.receiver.tracked();
  await publisher.deleteInstance(instance);
  const firstSent = sentAt.get(events[0].event_id) as number;
  return {
    latencies: arrivals.map(([id, at]) => at - (sentAt.get(id) as number)),
    acked,
    deliveredPerSecond: n / ((lastAt - firstSent) / 1000),
  };
}

/** W3's requests to the receiver that never answers. */
const STUCK = 500;

/**
 * W3 on the raw baseline: the same paced requests, sent straight to the healthy receiver while STUCK requests hold
 * connections to the dead one; publish→arrival latencies (ms), after a second at the rate, not measured.
 */
async function rawIsolated(ctx: RunContext, dead: Receiver, n: number, perSecond: number): Promise<number[]> {
  progress(`${ctx.label}: raw baseline, ${n} requests at ${perSecond}/s beside ${STUCK} that hang`);
  await ctx.receiver.reset(true);
  const warmup = perSecond;
  const sentAt = await rawIsolation({
    healthy: ctx.receiver.url,
    dead: dead.url,
    stuck: STUCK,
    n: warmup + n,
    perSecond,
  });
  await waitForArrivals(ctx.receiver, warmup + n, () => `${ctx.label}: raw W3`);
  const measured = [...sentAt.entries()].slice(warmup);
  const arrived = new Map(await ctx.receiver.tracked());
  return measured.map(([id, at]) => (arrived.get(id) as number) - at);
}

/** An engine's webhook: one event per request, each of 64 connections sending its next as soon as it is answered. */
const STREAM_CONNECTIONS = 64;
const STREAM_WARMUP_DELIVERIES = 2_000;
const engineStream = (c: Pick<RunContext, 'events'>, events: number) =>
  `${c.events ?? events} events, one request each, ${STREAM_CONNECTIONS} connections in a closed loop`;
const streamSpec = (ctx: RunContext, events: number, webhooks: number) => ({
  webhooks,
  events: ctx.events ?? events,
  // Not measured: opens the connections and compiles the hot code of every process before the clock starts.
  warmup: Math.min(Math.ceil(STREAM_WARMUP_DELIVERIES / webhooks), ctx.events ?? events),
  schedule: { kind: 'closed', concurrency: STREAM_CONNECTIONS } as const,
});

const latencyFigures = (ms: number[], prefix = ''): Figure[] =>
  Object.entries(latency(ms)).map(([k, value]) => ({ name: `${prefix}${k} ms`, value, unit: 'ms' }));

export const WORKLOADS: Workload[] = [
  {
    id: 'W1',
    title: (c) =>
      `throughput: ${c.events ?? 50_000} events in batches of ${BATCH}, 1 webhook` +
      (c.bulkWarmup ? `, after ${c.bulkWarmup} not measured` : ''),
    run: (ctx) => throughput(ctx, ctx.events ?? 50_000, 1),
  },
  {
    id: 'W2',
    title: (c) =>
      `latency: ${c.rate ?? 1000} events/s for ${(c.events ?? 20 * (c.rate ?? 1000)) / (c.rate ?? 1000)} s, one request each` +
      (c.warmup ? `, after ${c.warmup} s at that rate` : ''),
    run: (ctx) => {
      const perSecond = ctx.rate ?? 1000;
      // A second at the rate first (--warmup), not measured: connections opened, code warmed up. V8 is still
      // compiling after one second; a longer warm-up shows what a service up for minutes pays (BENCHMARKS.md).
      const schedule = { kind: 'paced', perSecond } as const;
      return onEachSystem(ctx, {
        webhooks: 1,
        events: ctx.events ?? 20 * perSecond,
        warmup: Math.round(perSecond * (ctx.warmup ?? 1)),
        schedule,
      });
    },
  },
  {
    id: 'W3',
    title: (c) =>
      `isolation: 500 events to a receiver that never answers, then ${c.events ?? 2000} at ${c.rate ?? 500}/s to a healthy one`,
    run: async (ctx) => {
      const [n, perSecond] = [ctx.events ?? 2000, ctx.rate ?? 500];
      const dead = await new Receiver('hang').start();
      try {
        const herald = await withHerald(ctx, async (_, publisher) => {
          const instance = await publisher.createInstance('W3 dead');
          await publisher.createWebhook(instance, dead.url);
          await publisher.publishBatches(instance, messageEvents(STUCK), { batch: STUCK, inFlight: 1 });
          const healthy = await paced(ctx, publisher, n, perSecond, 'W3 healthy');
          const { count } = await dead.arrivals();
          await publisher.deleteInstance(instance);
          return { healthy, count };
        });
        const raw = latency(await rawIsolated(ctx, dead, n, perSecond));
        const healthy = latency(herald.healthy.latencies);
        return [
          ...latencyFigures(herald.healthy.latencies, 'healthy '),
          { name: 'healthy delivered/s', value: herald.healthy.deliveredPerSecond, unit: 'rate' },
          { name: 'dead receiver: requests', value: herald.count, unit: 'count' },
          { name: 'raw healthy p50 ms', value: raw.p50, unit: 'ms' },
          { name: 'raw healthy p99 ms', value: raw.p99, unit: 'ms' },
          { name: 'healthy p99 ÷ raw', value: healthy.p99 / raw.p99, unit: 'ratio' },
        ];
      } finally {
        // Ends Herald's attempts still waiting on it.
        await dead.stop();
      }
    },
  },
  {
    id: 'W4',
    title: (c) =>
      `backlog: ${c.events ?? 1_000_000} deliveries pending (no dispatcher), then released (a restart)`,
    run: async (ctx) => {
      const n = ctx.events ?? 1_000_000;
      progress(`${ctx.label}: raw baseline`);
      const raw = await rawBaseline(ctx.receiver.url, Math.min(n, RAW_REQUESTS));
      const data = await freshData(ctx.databaseUrl);
      const start = (dispatch: boolean) =>
        HeraldProcess.start({ ...data, dispatch, profileDir: ctx.profileDir });
      try {
        // Phase 1: a Herald without dispatcher acknowledges the events; their deliveries stay pending.
        const idle = await start(false);
        const publisher = new Publisher(idle.url);
        const instance = await publisher.createInstance('W4');
        await publisher.createWebhook(instance, ctx.receiver.url);
        let acked = 0;
        const { startedAt, ackedAt } = await publisher.publishBatches(instance, messageEvents(n), {
          batch: 1000,
          inFlight: BATCH_IN_FLIGHT,
          onAck: (k) => {
            acked += k;
            progress(`${ctx.label}: ${acked}/${n} events acknowledged, none delivered (no dispatcher)`);
          },
        });
        await publisher.close();
        await idle.stop();
        // Phase 2: released — a normal Herald starts on the same data; timed from its start to the last arrival.
        await ctx.receiver.reset();
        const releasedAt = wallNow();
        const herald = await start(true);
        try {
          const { lastAt } = await waitForArrivals(ctx.receiver, n, () => `${ctx.label}: backlog released`);
          const delivered = n / ((lastAt - releasedAt) / 1000);
          const peak = await herald.peakRss();
          const cleanup = new Publisher(herald.url);
          await cleanup.deleteInstance(instance);
          await cleanup.close();
          return [
            { name: 'raw undici POST/s', value: raw, unit: 'rate' },
            { name: 'backlog ingest events/s', value: n / ((ackedAt - startedAt) / 1000), unit: 'rate' },
            { name: 'delivered/s', value: delivered, unit: 'rate' },
            { name: 'delivered / raw', value: delivered / raw, unit: 'ratio' },
            { name: 'peak RSS', value: peak, unit: 'bytes' },
          ];
        } finally {
          await herald.stop();
        }
      } finally {
        await data.remove();
      }
    },
  },
  {
    id: 'W5',
    title: (c) => `fan-out: ${c.events ?? 10_000} events to 50 webhooks (one receiver process, 50 paths)`,
    run: (ctx) => throughput(ctx, ctx.events ?? 10_000, 50),
  },
  {
    id: 'W-order',
    title: (c) =>
      `ordered delivery per chat: W1's ${c.events ?? 50_000} events over ${CHATS.toLocaleString('en')} chats to a ` +
      `webhook with ordering "none", then "chat" (alternating which first), then ` +
      `${Math.min(c.events ?? 50_000, SINGLE_CHAT_EVENTS)} events of one chat, ordering "chat"`,
    run: (ctx) => orderedDelivery(ctx, ctx.events ?? 50_000),
  },
  {
    id: 'ES1',
    title: (c) => `engine stream: ${engineStream(c, 20_000)}, 1 webhook`,
    run: (ctx) => onEachSystem(ctx, streamSpec(ctx, 20_000, 1)),
  },
  {
    id: 'ES50',
    title: (c) => `engine stream: ${engineStream(c, 2_000)}, 50 webhooks (one receiver process, 50 paths)`,
    run: (ctx) => onEachSystem(ctx, streamSpec(ctx, 2_000, 50)),
  },
  {
    id: 'EM',
    title: (c) =>
      `engine media: WAHA's bodies to …/engine/waha, ${engineStream(c, 5_000)}, 1 webhook, on Herald only: ` +
      `text, then each message with a file of ${FILE_BYTES / 1024} KiB on the bench's file server`,
    run: (ctx) => engineMedia(ctx, streamSpec(ctx, 5_000, 1)),
  },
];
