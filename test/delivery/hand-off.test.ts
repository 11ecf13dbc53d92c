/**
 * Fresh deliveries go from ingest straight to the dispatcher of the process (the hand-off: the room it gives ingest,
 * the claims ingest returns): an event to a webhook with nothing waiting leaves without a claim; a webhook with a
 * backlog keeps its order.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { Dispatcher } from '../../src/delivery/dispatcher.ts';
import { handingOff } from '../../src/delivery/hand-off.ts';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import type { Claims, Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { INSTANCE, loopbackSender, storeWithDeliveries, WEBHOOK } from '../support/delivery-store.ts';
import { eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let receiver: TestReceiver;
before(async () => {
  receiver = await TestReceiver.start();
});
after(() => receiver.close());

/** A dispatcher on `store` taking fresh deliveries from its ingest; every delivery its claims returned is recorded. */
function dispatching(store: Store) {
  const claimed: ClaimedDelivery[] = [];
  const claims: Claims = {
    claimDue: async (...args) => {
      const got = await store.claims.claimDue(...args);
      claimed.push(...got);
      return got;
    },
    nextDueAt: (after) => store.claims.nextDueAt(after),
    queueStats: (now) => store.claims.queueStats(now),
  };
  const watched = { ...store, claims };
  const sender = loopbackSender();
  const dispatcher = new Dispatcher({
    store: watched,
    sender,
    rules: { schedule: [60], maxRetryAfterS: 60 },
    clock: Date.now,
    logger: pino({ level: 'silent' }),
    leaseMs: 60_000,
    maxInFlightPerWebhook: 4,
  });
  dispatcher.start();
  return {
    dispatcher,
    claimed,
    async close() {
      await dispatcher.stop();
      await sender.close();
      await store.close();
    },
  };
}

let n = 0;
/** Publishes one event to the test instance as the events route of a delivering process does (app.ts wires it). */
async function publish(store: Store, dispatcher: Dispatcher): Promise<string> {
  const e = {
    event_id: `evt_intake${String(++n).padStart(14, '0')}`,
    event: 'presence.update',
    instance_id: INSTANCE,
    timestamp: Date.now(),
    payload: {},
  };
  await handingOff(store.events, dispatcher).ingest(
    INSTANCE,
    [{ ...e, body: eventBody(e) }],
    route,
    Date.now(),
  );
  return e.event_id;
}

const arrived = () => receiver.received.map((r) => r.body?.event_id as string);

test('an event to a webhook with nothing waiting goes out without a claim, once the first claim found nothing more', async () => {
  receiver.received.length = 0;
  receiver.answer = () => ({ status: 200 });
  const store = await storeWithDeliveries(0, Date.now(), [{ destination_url: receiver.url }]);
  const { dispatcher, claimed, close } = dispatching(store);
  try {
    const first = await publish(store, dispatcher);
    await receiver.waitFor(1);
    const later = [];
    for (let i = 0; i < 10; i++) {
      later.push(await publish(store, dispatcher));
      await receiver.waitFor(2 + i);
    }
    await eventually(
      async () => ((await store.claims.queueStats(Date.now())).pending === 0 ? true : undefined),
      5000,
      'every outcome written',
    );
    assert.deepEqual(arrived(), [first, ...later], 'each arrived once, in order');
    assert.deepEqual(
      claimed.map((c) => c.event_id),
      [first],
      'only the first event, before the webhook was known to have nothing waiting, was claimed',
    );
    const log = await store.log.listDeliveries(INSTANCE, { limit: 20, status: 'delivered' });
    assert.equal(log.deliveries.length, 11, 'every one is logged delivered');
  } finally {
    await close();
  }
});

test('a fresh event does not overtake a webhook backlog: it is claimed in its turn', async () => {
  receiver.received.length = 0;
  receiver.answer = () => ({ status: 200, delayMs: 5 });
  const store = await storeWithDeliveries(200, Date.now(), [{ destination_url: receiver.url }]);
  const { dispatcher, claimed, close } = dispatching(store);
  try {
    // Fresh events published while the backlog drains, each at a different point of its claims' cycle.
    const fresh = [];
    for (const k of [20, 45, 70, 95, 120]) {
      await receiver.waitFor(k);
      fresh.push(await publish(store, dispatcher));
    }
    await receiver.waitFor(205);
    // 4 run at once and at most 8 × 4 wait in the sender: nothing older is left behind more than that.
    for (const id of fresh) {
      const at = arrived().indexOf(id);
      assert.ok(at >= 200 - 4 * 8, `${id} arrived ${at + 1}th of 205, ahead of the backlog`);
      assert.ok(
        claimed.some((c) => c.event_id === id),
        `${id} went through a claim, not straight from ingest`,
      );
    }
  } finally {
    await close();
  }
});

test('deliveries an ingest hands over while the dispatcher stops are given back, due at once for another process', async () => {
  receiver.received.length = 0;
  receiver.answer = () => ({ status: 200 });
  const store = await storeWithDeliveries(0, Date.now(), [{ destination_url: receiver.url }]);
  const { dispatcher, close } = dispatching(store);
  // An ingest whose transaction commits as the stop begins (on PostgreSQL the commit is a round trip away).
  const e = {
    event_id: 'evt_intake_stop00000000001',
    event: 'presence.update',
    instance_id: INSTANCE,
    timestamp: 0,
  };
  const room = { leaseMs: 60_000, room: new Map([[WEBHOOK, 1]]) };
  const [result] = await store.events.ingest(
    INSTANCE,
    [{ ...e, payload: {}, body: eventBody({ ...e, payload: {} }) }],
    route,
    Date.now(),
    room,
  );
  const id = e.event_id;
  assert.equal(result.handedOff?.length, 1, 'handed off, leased');
  const stopped = dispatcher.stop();
  dispatcher.takeHandOff(result.handedOff ?? []);
  await stopped;
  try {
    assert.deepEqual(receiver.received, [], 'no attempt was made during the stop');
    const due = await store.claims.claimDue(Date.now(), 10, 60_000, () => 10);
    assert.deepEqual(
      due.map((c) => c.event_id),
      [id],
      'it is due at once',
    );
  } finally {
    await close();
  }
});
