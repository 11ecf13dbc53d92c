/**
 * The dispatcher claims a busy webhook ahead of its cap and its lane holds those claims until attempts finish: the
 * cap on attempts in flight still holds, a held claim that waited too long is given back rather than attempted, and
 * a stop gives back every held claim.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pino from 'pino';
import { Dispatcher, type DispatcherOptions, HOLD_MS } from '../../src/delivery/dispatcher.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';
import type { Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { INSTANCE, storeWithDeliveries } from '../support/delivery-store.ts';
import { eventually } from '../support/herald.ts';
import { LaneSender } from '../support/lane-sender.ts';

const ok = (at: number): AttemptOutcome => ({
  started_at: at,
  duration_ms: 1,
  status_code: 200,
  error: null,
  response_body: null,
  retry_after: null,
});

type Attempt = (claim: ClaimedDelivery) => Promise<AttemptOutcome>;

/** A dispatcher whose attempts `send` makes, admitted by real lanes on the dispatcher's clock. */
function dispatcher({
  send,
  ...o
}: Pick<DispatcherOptions, 'store'> & Partial<DispatcherOptions> & { send: Attempt }) {
  const sender = new LaneSender(send, { clock: o.clock, maxRunning: o.maxInFlight });
  after(() => sender.close());
  return new Dispatcher({
    rules: { schedule: [5], maxRetryAfterS: 60 },
    clock: Date.now,
    logger: pino({ level: 'silent' }),
    leaseMs: 60_000,
    sender,
    ...o,
  });
}

test('claims run ahead of the cap, attempts never exceed it, and each delivery is attempted once', async () => {
  const store = await storeWithDeliveries(60, Date.now());
  let [running, most] = [0, 0];
  const sent: string[] = [];
  const d = dispatcher({
    store,
    maxInFlightPerWebhook: 4,
    ahead: 3,
    send: async (claim) => {
      sent.push(claim.delivery_id);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running--;
      return ok(Date.now());
    },
  });
  d.start();
  await eventually(
    async () => ((await store.claims.queueStats(Date.now())).pending === 0 ? true : undefined),
    10_000,
    'all delivered',
  );
  await d.stop();
  await store.close();
  assert.equal(most, 4, 'the cap was reached and held');
  assert.deepEqual([sent.length, new Set(sent).size], [60, 60]);
});

test('a held claim that waited longer than HOLD_MS is given back and claimed afresh, not attempted on its old lease', async () => {
  let now = 1_700_000_000_000;
  const store = await storeWithDeliveries(3, now);
  const claims: ClaimedDelivery[] = [];
  let finishFirst: (o: AttemptOutcome) => void = () => {};
  const d = dispatcher({
    store,
    clock: () => now,
    maxInFlightPerWebhook: 1,
    ahead: 3,
    send: (claim) => {
      claims.push(claim);
      if (claims.length > 1) return Promise.resolve(ok(now));
      return new Promise((resolve) => {
        finishFirst = resolve;
      });
    },
  });
  d.start();
  await eventually(async () => (claims.length === 1 ? true : undefined), 5000, 'the first attempt');
  now += HOLD_MS + 1;
  finishFirst(ok(now));
  await eventually(async () => (claims.length === 3 ? true : undefined), 5000, 'the other two attempts');
  await d.stop();
  await store.close();
  const [first, ...later] = claims;
  for (const c of later)
    assert.notEqual(c.lease_token, first.lease_token, `${c.delivery_id} was claimed again`);
});

test('a stop gives back the held claims with those still running: another process can take them all at once', async () => {
  const store = await storeWithDeliveries(10, Date.now());
  let started = 0;
  const d = dispatcher({
    store,
    maxInFlightPerWebhook: 2,
    ahead: 4,
    send: () => {
      started++;
      return new Promise(() => {}); // never answers
    },
  });
  d.start();
  await eventually(async () => (started === 2 ? true : undefined), 5000, 'two attempts');
  await d.stop(50);
  const again = await store.claims.claimDue(Date.now(), 100, 60_000, () => 100);
  await store.close();
  assert.equal(again.length, 10, 'the 2 running, the 6 held and the 2 never claimed');
});

test('hanging receivers keep only their cap of claims: a healthy webhook is claimed and delivered while they hang', async () => {
  // PostgreSQL's 8 × the cap: claimed ahead that far, either hanging webhook alone would take all 2 × 8 claims the
  // dispatcher keeps at most, and keep them while its attempts hang.
  const store = await storeWithDeliveries(10, Date.now(), [{}, {}, {}]);
  const [hangingA, hangingB, healthy] = (await store.webhooks.listWebhooks(INSTANCE))
    .map((w) => w.webhook_id)
    .sort();
  const sent = new Map<string, number>();
  let skew = 0;
  const clock = () => Date.now() + skew;
  const d = dispatcher({
    store,
    clock,
    maxInFlight: 8,
    maxInFlightPerWebhook: 2,
    ahead: 8,
    send: (claim) => {
      sent.set(claim.webhook_id, (sent.get(claim.webhook_id) ?? 0) + 1);
      if (claim.webhook_id === healthy) return Promise.resolve(ok(Date.now()));
      return new Promise(() => {}); // never answers
    },
  });
  d.start();
  await eventually(async () => (sent.get(healthy) === 10 ? true : undefined), 15_000, 'the healthy webhook');
  // What the hanging webhooks were claimed beyond their cap goes stale after HOLD_MS and is given back; as they
  // still hang, it is not claimed again: another process could take it.
  skew += HOLD_MS + 1;
  await eventually(
    async () => ((await store.claims.queueStats(clock())).due === 16 ? true : undefined),
    5000,
    'stale claims given back',
  );
  const free = await store.claims.claimDue(clock(), 100, 60_000, (id) => (id === healthy ? 0 : 100));
  await d.stop(50);
  await store.close();
  assert.deepEqual(
    [sent.get(hangingA), sent.get(hangingB)],
    [2, 2],
    'each hanging webhook got its cap, no more',
  );
  assert.equal(free.length, 16, "all but the hanging webhooks' 2 + 2 attempts in flight");
});

test('a claim that got less than it asked for: its attempts ending claim nothing more until new work is queued', async () => {
  const store = await storeWithDeliveries(3, Date.now());
  let claims = 0;
  const counted: Store = {
    ...store,
    claims: {
      claimDue: (...args) => {
        claims++;
        return store.claims.claimDue(...args);
      },
      nextDueAt: (after) => store.claims.nextDueAt(after),
      queueStats: (now) => store.claims.queueStats(now),
    },
  };
  let done = 0;
  const d = dispatcher({
    store: counted,
    send: async () => {
      done++;
      return ok(Date.now());
    },
  });
  d.start();
  await eventually(async () => (done === 3 ? true : undefined), 5000, 'three attempts');
  await new Promise((resolve) => setTimeout(resolve, 300)); // within the loop's 1 s sleep
  assert.equal(claims, 1, 'the attempts ending made no claim: nothing more of the webhook was due');
  d.wake(); // an ingest, say
  await eventually(async () => (claims === 2 ? true : undefined), 2000, 'a claim for the new work');
  await d.stop();
  await store.close();
});
