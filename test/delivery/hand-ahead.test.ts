/**
 * The dispatcher hands a busy webhook's next attempts to the delivery thread ahead of its cap, and the webhook's
 * lane starts each the moment one ends (src/delivery/lanes.ts). Against a real receiver: the cap still holds at the
 * receiver, an attempt's start is when it left, an attempt that could not start in time is claimed afresh rather
 * than made on its old lease, and a stop gives back what was waiting.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { Dispatcher, type DispatcherOptions, HOLD_MS } from '../../src/delivery/dispatcher.ts';
import type { SenderPort, ThreadFeed } from '../../src/delivery/thread-feed.ts';
import type { Webhook } from '../../src/domain/types.ts';
import type { Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { INSTANCE, loopbackSender, storeWithDeliveries } from '../support/delivery-store.ts';
import { eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let receiver: TestReceiver;
before(async () => {
  receiver = await TestReceiver.start();
});
after(() => receiver.close());

/**
 * `deliveries` events due to each of `webhooks` (by default one, to the receiver, whose record is cleared) and a
 * dispatcher with a real delivery thread; every claim it hands over is recorded, and how many were out at once.
 */
async function setUp(
  deliveries: number,
  o: Partial<DispatcherOptions>,
  webhooks: Partial<Webhook>[] = [{ destination_url: receiver.url }],
) {
  receiver.received.length = 0;
  const store = await storeWithDeliveries(deliveries, Date.now(), webhooks);
  const sender = loopbackSender(o.maxInFlight);
  const claims: ClaimedDelivery[] = [];
  const handed = { now: 0, most: 0, by: new Map<string, number>(), mostBy: new Map<string, number>() };
  // The real sender, watched: every claim handed over, and how many were out at once, in all and per webhook.
  const watched: SenderPort = {
    submit(batch) {
      for (const { item: claim } of batch) {
        claims.push(claim);
        const w = claim.webhook_id;
        handed.most = Math.max(handed.most, ++handed.now);
        handed.by.set(w, (handed.by.get(w) ?? 0) + 1);
        handed.mostBy.set(w, Math.max(handed.mostBy.get(w) ?? 0, handed.by.get(w) ?? 0));
      }
      sender.submit(batch);
    },
    drop: () => sender.drop(),
    onResults(handler) {
      sender.onResults((sent) => {
        for (const { claim } of sent) {
          handed.now--;
          handed.by.set(claim.webhook_id, (handed.by.get(claim.webhook_id) ?? 0) - 1);
        }
        handler(sent);
      });
    },
  };
  const dispatcher = new Dispatcher({
    store,
    sender: watched,
    rules: { schedule: [60], maxRetryAfterS: 60 },
    clock: Date.now,
    logger: pino({ level: 'silent' }),
    leaseMs: 60_000,
    ...o,
  });
  return { store, sender, dispatcher, claims, handed };
}

/** Answers 200 after `delayMs`, counting requests that arrived and are not answered yet. */
function answerAfter(delayMs: number) {
  const seen = { open: 0, most: 0 };
  receiver.answer = () => {
    seen.most = Math.max(seen.most, ++seen.open);
    setTimeout(() => seen.open--, delayMs); // before the answer's own timer: never counts more than are open
    return { status: 200, delayMs };
  };
  return seen;
}

/** Starts the dispatcher, waits until every delivery is made, then stops and closes everything. */
async function deliverAll(o: { store: Store; sender: ThreadFeed; dispatcher: Dispatcher }) {
  o.dispatcher.start();
  await allDone(o.store);
  await o.dispatcher.stop();
  await o.sender.close();
  await o.store.close();
}

const allDone = (store: Store) =>
  eventually(
    async () => ((await store.claims.queueStats(Date.now())).pending === 0 ? true : undefined),
    20_000,
    'every delivery made',
  );

test('handed twice the cap, the receiver never has more than the cap open, and each delivery arrives once', async () => {
  const { store, sender, dispatcher } = await setUp(60, { maxInFlightPerWebhook: 4, ahead: 4 });
  const seen = answerAfter(20);
  await deliverAll({ store, sender, dispatcher });
  assert.equal(seen.most, 4, 'the cap was reached and held at the receiver');
  const ids = receiver.received.map((r) => r.headers['x-herald-event-id'] ?? r.body?.event_id);
  assert.deepEqual([ids.length, new Set(ids).size], [60, 60]);
});

test('an attempt that waited in the sender is logged as starting when it left, not when it was handed over', async () => {
  const { store, sender, dispatcher, claims } = await setUp(3, { maxInFlightPerWebhook: 1, ahead: 3 });
  answerAfter(150);
  dispatcher.start();
  await allDone(store);
  await dispatcher.stop();
  await sender.close();
  const starts = [];
  // A claim that could not start within its window goes back and is claimed again (a slow machine): once each.
  for (const id of new Set(claims.map((c) => c.delivery_id))) {
    const detail = await store.log.getDelivery(INSTANCE, id);
    starts.push(detail?.attempts_log[0].started_at ?? Number.NaN);
  }
  await store.close();
  starts.sort((a, b) => a - b);
  assert.equal(starts.length, 3);
  for (let i = 1; i < 3; i++) {
    assert.ok(
      starts[i] - starts[i - 1] >= 140,
      `attempt ${i + 1} started ${starts[i] - starts[i - 1]} ms after the one before`,
    );
  }
  const arrivals = receiver.received.map((r) => r.at);
  for (let i = 0; i < 3; i++) {
    assert.ok(
      Math.abs(arrivals[i] - starts[i]) < 100,
      `attempt ${i + 1} arrived ${arrivals[i] - starts[i]} ms after its logged start`,
    );
  }
});

test('a slow receiver is handed ahead only what it starts within half of HOLD_MS: nothing goes stale and is claimed again', async () => {
  // 8 × the cap would be 14 waiting behind 2 attempts of 200 ms each, 1.4 s: past HOLD_MS, given back, claimed again.
  const { store, sender, dispatcher, claims } = await setUp(24, {
    maxInFlightPerWebhook: 2,
    ahead: 8,
  });
  answerAfter(200);
  await deliverAll({ store, sender, dispatcher });
  assert.deepEqual(
    [claims.length, new Set(claims.map((c) => c.delivery_id)).size],
    [24, 24],
    'each claimed once',
  );
});

test('a fast receiver is handed far beyond twice the cap, and still never has more than the cap open', async () => {
  const { store, sender, dispatcher, handed } = await setUp(2000, {
    maxInFlightPerWebhook: 4,
    ahead: 8,
  });
  const seen = answerAfter(1);
  await deliverAll({ store, sender, dispatcher });
  assert.equal(seen.most, 4, 'the cap held at the receiver');
  assert.ok(handed.most > 8, `at most ${handed.most} handed to the sender at once`);
  assert.ok(handed.most <= 32, `${handed.most} handed at once: more than 8 × the cap`);
});

test('fast webhooks share what runs ahead: none is handed more than its cap and an even share of the process-wide cap', async () => {
  // 4 webhooks in flight, maxInFlight 16: each runs at most 4 and is handed at most 4 more, where alone it would be
  // handed up to 16 (the process leases twice maxInFlight).
  const { store, sender, dispatcher, handed } = await setUp(
    500,
    { maxInFlight: 16, maxInFlightPerWebhook: 4, ahead: 8 },
    Array.from({ length: 4 }, () => ({ destination_url: receiver.url })),
  );
  answerAfter(1);
  await deliverAll({ store, sender, dispatcher });
  assert.equal(receiver.received.length, 2000);
  for (const [webhookId, most] of handed.mostBy) assert.ok(most <= 8, `${webhookId}: ${most} handed at once`);
});

test('an attempt that could not start within HOLD_MS is handed back and claimed afresh, never made on its old lease', async () => {
  const { store, sender, dispatcher, claims } = await setUp(2, { maxInFlightPerWebhook: 1, ahead: 2 });
  answerAfter(HOLD_MS + 300);
  dispatcher.start();
  await allDone(store);
  await dispatcher.stop();
  await sender.close();
  const [first, second, ...again] = claims;
  assert.equal(again.length, 1, 'the second delivery was claimed once more');
  assert.equal(again[0].delivery_id, second.delivery_id);
  assert.notEqual(again[0].lease_token, second.lease_token);
  assert.equal(receiver.received.length, 2, 'each delivery reached the receiver once');
  for (const c of [first, second]) {
    const detail = await store.log.getDelivery(INSTANCE, c.delivery_id);
    assert.equal(detail?.attempts_log.length, 1, `${c.delivery_id}: one attempt logged`);
    assert.equal(detail?.status, 'delivered');
  }
  await store.close();
});

test('a stop gives back the attempts waiting in the sender: none starts, and another process can take them at once', async () => {
  const { store, sender, dispatcher, claims } = await setUp(10, { maxInFlightPerWebhook: 2, ahead: 4 });
  answerAfter(300);
  dispatcher.start();
  await receiver.waitFor(2);
  await eventually(async () => (claims.length === 4 ? true : undefined), 5000, 'two attempts waiting');
  await dispatcher.stop(); // the two running finish
  await sender.close();
  const again = await store.claims.claimDue(Date.now(), 100, 60_000, () => 100);
  await store.close();
  assert.equal(receiver.received.length, 2, 'no waiting attempt started during the stop');
  assert.equal(again.length, 8, 'the 2 waiting in the sender, the 4 held and the 2 never claimed');
});

test('attempts waiting behind a hanging receiver stay put: they are not handed back and claimed again every second', async () => {
  const { store, sender, dispatcher, claims } = await setUp(10, { maxInFlightPerWebhook: 2, ahead: 4 });
  receiver.answer = () => 'hang';
  dispatcher.start();
  await eventually(async () => (claims.length === 4 ? true : undefined), 5000, 'two attempts waiting');
  await new Promise((resolve) => setTimeout(resolve, 2 * HOLD_MS + 500)); // past the waiting ones' deadline
  await dispatcher.stop(50);
  await sender.close();
  await store.close();
  assert.equal(claims.length, 4, 'nothing was handed over again');
  assert.equal(receiver.received.length, 2);
});

test('attempts waiting in the sender do not count against the process-wide cap: hanging receivers hold only their cap of it', async () => {
  const hanging = await TestReceiver.start();
  hanging.answer = () => 'hang';
  answerAfter(0);
  // Two hanging webhooks run 4 attempts each and have 4 more each waiting in the sender: 8 of the 12 count.
  const { store, sender, dispatcher } = await setUp(
    10,
    { maxInFlight: 12, maxInFlightPerWebhook: 4, ahead: 2 },
    [{ destination_url: hanging.url }, { destination_url: hanging.url }, { destination_url: receiver.url }],
  );
  dispatcher.start();
  await hanging.waitFor(8);
  await receiver.waitFor(10);
  await dispatcher.stop(50);
  await sender.close();
  await store.close();
  await hanging.close();
  assert.equal(hanging.received.length, 8, 'each hanging webhook reached its cap, no more');
});
