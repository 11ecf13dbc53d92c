/**
 * W-order: ordered delivery per chat (a webhook's `ordering: "chat"`, src/store/queue/transitions.ts) against
 * unordered, in one run. Three legs, each on a fresh Herald with one webhook:
 * - none: W1's publishing (the same events, batches of 500, 4 in flight), the messages spread over CHATS chats
 *   (event i in chat i mod CHATS, the chat in WAHA's message id and in `from`), to a webhook with ordering "none";
 * - chat: the same events to a webhook with ordering "chat": each chat's deliveries start one at a time;
 * - single chat: fewer events, all of one chat, ordering "chat": one delivery at a time from first to last, so its
 *   rate is one round trip per delivery (the receiver's answer, the outcome's commit that makes the next one due,
 *   the claim that takes it).
 * The none and chat legs alternate which goes first from run to run (within one invocation). The receiver keeps
 * each event's arrival time; a chat whose arrivals are not in the order Herald accepted its events is counted (never
 * in an ordered leg). Herald is started counting the dispatcher's claims and outcome writes (herald-process.ts).
 */
import { freshData } from './fresh-data.ts';
import { HeraldProcess, type StoreCalls } from './herald-process.ts';
import { messagePayload } from './payloads.ts';
import { eventSeries, type PublishedEvent, Publisher } from './publisher.ts';
import { type Arrivals, type Receiver, waitForArrivals } from './receiver.ts';
import type { Figure, RunContext } from './run-context.ts';
import { median, progress } from './stats.ts';

export const CHATS = 1_000;
/** Events of the single-chat leg (at most --events), and how long it is given: its rate is taken over what arrived. */
export const SINGLE_CHAT_EVENTS = 2_000;
const SINGLE_CHAT_MAX_MS = 30_000;
const BATCH = 500;
const BATCH_IN_FLIGHT = 4;

/** The phone of chat `c`: 4917000000001 for chat 1, as a WAHA chat id `<phone>@c.us`. */
const chatPhone = (c: number) => `4917${String(c).padStart(9, '0')}`;

/** Message `i` of the series, in chat `c`: WAHA's id `false_<chat>_<id>` and `from` name the chat. */
function chatMessage(prefix: string, i: number, c: number): PublishedEvent {
  const phone = chatPhone(c);
  return {
    event: 'message',
    event_id: `${prefix}${i}`,
    payload: {
      ...messagePayload(i),
      id: `false_${phone}@c.us_3EB0${String(i).padStart(8, '0')}`,
      from: `${phone}@c.us`,
      from_phone: phone,
    },
  };
}

interface Leg {
  deliveredPerSecond: number;
  ingestPerSecond: number;
  /** Milliseconds from the first arrival to the last, per delivery after the first. */
  msBetweenArrivals: number;
  /** Chats with at least one event that arrived before one published earlier in the chat. */
  chatsOutOfOrder: number;
  /** Deliveries measured (the single-chat leg stops at its time limit). */
  arrived: number;
  /** The dispatcher's claims and outcome writes over the leg. */
  calls: StoreCalls;
  seconds: number;
}

/**
 * `n` events over `chats` chats to a fresh Herald's webhook with `ordering`; timed from first publish to last
 * arrival, or to `maxMs` after the first publish if all has not arrived by then (the deliveries left are deleted
 * with the instance).
 */
async function orderLeg(
  ctx: RunContext,
  what: string,
  n: number,
  chats: number,
  ordering: 'none' | 'chat',
  maxMs = Number.POSITIVE_INFINITY,
): Promise<Leg> {
  const data = await freshData(ctx.databaseUrl);
  let herald: HeraldProcess | null = null;
  let publisher: Publisher | null = null;
  try {
    herald = await HeraldProcess.start({
      ...data,
      dispatch: true,
      profileDir: ctx.profileDir,
      countStoreCalls: true,
    });
    publisher = new Publisher(herald.url);
    const instance = await publisher.createInstance(`W-order ${what}`);
    await publisher.createWebhook(instance, ctx.receiver.url, ordering);
    const prefix = eventSeries();
    const events = Array.from({ length: n }, (_, i) => chatMessage(prefix, i, i % chats));
    await ctx.receiver.reset(true);
    await herald.storeCalls();
    let acked = 0;
    const batches: { sentAt: number; ackedAt: number }[] = [];
    const publishing = publisher.publishBatches(instance, events, {
      batch: BATCH,
      inFlight: BATCH_IN_FLIGHT,
      onAck: (k) => {
        acked += k;
      },
      onBatch: (index, sentAt, ackedAt) => {
        batches[index] = { sentAt, ackedAt };
      },
    });
    const label = () => `${ctx.label} ${what}: ${acked}/${n} events acknowledged`;
    const { count, firstAt, lastAt } = Number.isFinite(maxMs)
      ? await arrivalsWithin(ctx.receiver, n, maxMs, label, publishing)
      : await waitForArrivals(ctx.receiver, n, label, publishing);
    const calls = await herald.storeCalls();
    const { startedAt, ackedAt } = await publishing;
    const arrivals = await ctx.receiver.tracked();
    await publisher.deleteInstance(instance);
    return {
      deliveredPerSecond: count / ((lastAt - startedAt) / 1000),
      ingestPerSecond: n / ((ackedAt - startedAt) / 1000),
      msBetweenArrivals: (lastAt - firstAt) / (count - 1),
      chatsOutOfOrder: outOfOrder(arrivals, prefix, n, chats, batches),
      arrived: count,
      calls,
      seconds: (lastAt - startedAt) / 1000,
    };
  } finally {
    await publisher?.close();
    await herald?.stop();
    await data.remove();
  }
}

/** waitForArrivals, but only until `maxMs` from now: the arrivals by then (at least 2, or it fails). */
async function arrivalsWithin(
  receiver: Receiver,
  n: number,
  maxMs: number,
  label: () => string,
  work: Promise<unknown>,
): Promise<Arrivals> {
  let failed: unknown = null;
  work.catch((err) => {
    failed = err;
  });
  const deadline = Date.now() + maxMs;
  for (;;) {
    const a = await receiver.arrivals();
    progress(`${label()}, ${a.count.toLocaleString('en-US')}/${n.toLocaleString('en-US')} arrived`);
    if (failed) throw failed;
    if (a.count >= n || Date.now() >= deadline) {
      if (a.count < 2) throw new Error(`${label()}: ${a.count} arrival(s) in ${maxMs} ms`);
      return a;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Chats in which an event arrived before one accepted earlier in the same chat. Accepted earlier: earlier in the
 * same batch, or in a batch acknowledged before the event's own was sent. Batches in flight together (4 at a time)
 * have no order between them: Herald may take either first. An event that arrived while one accepted before it did
 * not (the single-chat leg ends at its time limit) is out of order.
 */
function outOfOrder(
  arrivals: [string, number][],
  prefix: string,
  n: number,
  chats: number,
  batches: { sentAt: number; ackedAt: number }[],
): number {
  const at = new Float64Array(n).fill(Number.NaN);
  for (const [id, t] of arrivals) {
    const i = Number(id.slice(prefix.length));
    if (id.startsWith(prefix) && i < n) at[i] = t;
  }
  const batchOf = (i: number) => Math.floor(i / BATCH);
  let bad = 0;
  for (let c = 0; c < chats; c++) {
    chat: for (let b = c; b < n; b += chats) {
      if (Number.isNaN(at[b])) continue;
      const kb = batchOf(b);
      for (let a = c; a < b; a += chats) {
        const ka = batchOf(a);
        const before = ka === kb || batches[ka].ackedAt < batches[kb].sentAt;
        if (before && !(at[a] < at[b])) {
          bad++;
          break chat;
        }
      }
    }
  }
  return bad;
}

let runs = 0;

export async function orderedDelivery(ctx: RunContext, n: number): Promise<Figure[]> {
  // Alternate which leg goes first, so that neither always has the cooler (or warmer) minute.
  const chatFirst = runs++ % 2 === 1;
  const legs: Partial<Record<'none' | 'chat', Leg>> = {};
  for (const ordering of chatFirst ? (['chat', 'none'] as const) : (['none', 'chat'] as const))
    legs[ordering] = await orderLeg(ctx, `ordering ${ordering}`, n, CHATS, ordering);
  const single = await orderLeg(
    ctx,
    'one chat',
    Math.min(n, SINGLE_CHAT_EVENTS),
    1,
    'chat',
    SINGLE_CHAT_MAX_MS,
  );
  const [none, chat] = [legs.none as Leg, legs.chat as Leg];
  return [
    { name: 'none ingest events/s', value: none.ingestPerSecond, unit: 'rate' },
    { name: 'none delivered/s', value: none.deliveredPerSecond, unit: 'rate' },
    { name: 'chat ingest events/s', value: chat.ingestPerSecond, unit: 'rate' },
    { name: 'chat delivered/s', value: chat.deliveredPerSecond, unit: 'rate' },
    { name: 'chat / none', value: chat.deliveredPerSecond / none.deliveredPerSecond, unit: 'ratio' },
    { name: 'single chat delivered/s', value: single.deliveredPerSecond, unit: 'rate' },
    { name: 'single chat ms per delivery', value: single.msBetweenArrivals, unit: 'ms' },
    { name: 'single chat deliveries measured', value: single.arrived, unit: 'count' },
    ...claimFigures('none', none),
    ...claimFigures('chat', chat),
    ...claimFigures('single chat', single),
    { name: 'chats out of order, none', value: none.chatsOutOfOrder, unit: 'count' },
    { name: 'chats out of order, chat', value: chat.chatsOutOfOrder, unit: 'count' },
    { name: 'single chat out of order', value: single.chatsOutOfOrder, unit: 'count' },
  ];
}

/** Where a leg's time went: the dispatcher's claims, per second and per delivery, and outcome writes. */
function claimFigures(name: string, leg: Leg): Figure[] {
  const c = leg.calls;
  const figures: Figure[] = [
    { name: `${name} claims/s`, value: c.claims / leg.seconds, unit: 'rate' },
    { name: `${name} empty claims/s`, value: c.emptyClaims / leg.seconds, unit: 'rate' },
    {
      name: `${name} deliveries per claim that took any`,
      value: c.claimed / Math.max(1, c.claims - c.emptyClaims),
      unit: 'ratio',
    },
    { name: `${name} outcome writes/s`, value: c.outcomeWrites / leg.seconds, unit: 'rate' },
  ];
  if (c.claimGapsMs.length > 0)
    figures.push({
      name: `${name} outcome write → next claim that took any, p50 ms`,
      value: median(c.claimGapsMs),
      unit: 'ms',
    });
  return figures;
}
