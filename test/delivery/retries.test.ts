/** Outcomes of an attempt and the retry schedule: seed §3.2, §7, §8; SPEC §8. On a fast schedule. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Answer, TestReceiver } from '../support/receiver.ts';
import { assertGaps, delivery, getWebhook, type Hook, hook, pause, publish, settled } from './helpers.ts';

const STEPS_MS = [200, 400, 600, 800, 1000];
const TIMEOUT_MS = 300;
/** The cap on a 429 Retry-After postponement (SPEC §1 MAX_RETRY_AFTER_S; 3600 by default, seed §8). */
const MAX_RETRY_AFTER_S = 2;
/** Upper slack on a gap: the dispatcher wakes at the due time; the rest is claim + send + the machine's load. */
const SLACK_MS = 600;

describe('retries', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({
      RETRY_SCHEDULE: STEPS_MS.map((ms) => ms / 1000).join(','),
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
      MAX_RETRY_AFTER_S: String(MAX_RETRY_AFTER_S),
    });
  });
  after(() => h.close());

  /** Runs `body` with a fresh webhook whose receiver answers per `answer`, closing the receiver after. */
  async function withHook<T>(answer: (n: number) => Answer, body: (k: Hook) => Promise<T>): Promise<T> {
    const k = await hook(h);
    k.receiver.answer = (_req, n) => answer(n);
    try {
      return await body(k);
    } finally {
      await k.receiver.close();
    }
  }

  /**
   * A receiver that always answers `answer`: the first attempt comes at once, the others after the schedule
   * (plus `failTimeMs`, the time an attempt takes to fail); after 6 attempts the delivery is failed.
   */
  function exhaust(answer: Answer, failTimeMs: number) {
    return withHook(
      () => answer,
      async ({ instanceId, webhookId, receiver }) => {
        const eventId = await publish(h, instanceId);
        // From the 202: how long the publish itself took (a durable commit on a loaded machine) is not the schedule's.
        const acceptedAt = Date.now();
        const arrivals = await receiver.waitFor(6, 15_000);
        assert.ok(
          arrivals[0].at - acceptedAt < 500,
          `first attempt ${arrivals[0].at - acceptedAt} ms after the 202`,
        );
        // An attempt's clock starts a little before its request reaches the receiver, hence the 50 ms.
        assertGaps(
          arrivals,
          STEPS_MS.map((step) => step + Math.max(0, failTimeMs - 50)),
          SLACK_MS,
        );
        const d = await settled(h, instanceId, webhookId, eventId);
        assert.equal(d.status, 'failed');
        assert.equal(d.failure_reason, 'attempts_exhausted');
        assert.equal(d.attempt_count, 6);
        assert.equal(d.next_attempt_at, null);
        assert.deepEqual(
          d.attempts.map((a: any) => a.attempt),
          [1, 2, 3, 4, 5, 6],
        );
        assert.ok(
          d.attempts.slice(0, 5).every((a: any) => a.next_attempt_at !== null && a.trigger === 'scheduled'),
        );
        assert.equal(d.attempts[5].next_attempt_at, null);
        assertLoggedGaps(d.attempts);
        assert.equal(receiver.received.length, 6, 'nothing after the 6th attempt');
        return d;
      },
    );
  }

  /** In the log, each attempt starts at least one schedule step after the previous one ended. */
  function assertLoggedGaps(attempts: any[]): void {
    for (let i = 1; i < attempts.length; i++) {
      const ended = Date.parse(attempts[i - 1].started_at) + attempts[i - 1].duration_ms;
      const wait = Date.parse(attempts[i].started_at) - ended;
      assert.ok(wait >= STEPS_MS[i - 1], `attempt ${i + 1} started ${wait} ms after attempt ${i} ended`);
    }
  }

  for (const status of [500, 404]) {
    test(`${status}: retried per schedule, 6 attempts, then failed attempts_exhausted`, async () => {
      const d = await exhaust({ status }, 0);
      assert.ok(d.attempts.every((a: any) => a.status_code === status && a.error === null));
    });
  }

  test('a 301 redirect is not followed: retried, and its Location gets nothing', async () => {
    const elsewhere = await TestReceiver.start();
    try {
      const d = await exhaust({ status: 301, headers: { location: elsewhere.url } }, 0);
      assert.ok(d.attempts.every((a: any) => a.status_code === 301));
      assert.equal(elsewhere.received.length, 0);
    } finally {
      await elsewhere.close();
    }
  });

  test('no answer within DELIVERY_TIMEOUT_MS: a timeout, retried per schedule', async () => {
    const d = await exhaust('hang', TIMEOUT_MS);
    for (const a of d.attempts) {
      assert.equal(a.status_code, null);
      assert.equal(a.error, 'timeout');
      assert.ok(
        a.duration_ms >= TIMEOUT_MS - 5 && a.duration_ms < TIMEOUT_MS + 500,
        `took ${a.duration_ms} ms`,
      );
    }
  });

  test('a reset connection: retried per schedule', async () => {
    const d = await exhaust('reset', 0);
    assert.ok(d.attempts.every((a: any) => a.status_code === null && a.error === 'connection_reset'));
  });

  test('a 2xx on attempt 3: delivered, no more attempts', () =>
    withHook(
      (n) => ({ status: n < 2 ? 500 : 204 }),
      async ({ instanceId, webhookId, receiver }) => {
        const eventId = await publish(h, instanceId);
        assertGaps(await receiver.waitFor(3), STEPS_MS.slice(0, 2), SLACK_MS);
        const d = await settled(h, instanceId, webhookId, eventId);
        assert.equal(d.status, 'delivered');
        assert.equal(d.failure_reason, null);
        assert.equal(d.attempt_count, 3);
        assert.deepEqual(
          d.attempts.map((a: any) => a.status_code),
          [500, 500, 204],
        );
        assert.equal(receiver.received.length, 3);
      },
    ));

  test('410: delivery failed (gone), webhook disabled, its pending retries failed, nothing sent until enabled', () =>
    // The first event is postponed by a 429 so that it waits for a retry when the second one meets the 410.
    withHook(
      (n) => (n === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: n === 1 ? 410 : 200 }),
      async ({ instanceId, webhookId, receiver }) => {
        const waiting = await publish(h, instanceId);
        await receiver.waitFor(1);
        const gone = await publish(h, instanceId);
        await receiver.waitFor(2);

        const g = await settled(h, instanceId, webhookId, gone);
        assert.equal(g.status, 'failed');
        assert.equal(g.failure_reason, 'gone');
        assert.equal(g.attempts[0].status_code, 410);
        const w = await getWebhook(h, instanceId, webhookId);
        assert.equal(w.enabled, false);
        assert.equal(w.disabled_reason, 'gone');
        const p = await delivery(h, instanceId, webhookId, waiting);
        assert.equal(p.status, 'failed');
        assert.equal(p.failure_reason, 'webhook_disabled');
        assert.equal(p.next_attempt_at, null);

        const whileDisabled = await h.publish(instanceId, { event: 'message', payload: messagePayload() });
        assert.equal(whileDisabled.status, 202);
        assert.equal(whileDisabled.body.deliveries, 0, 'not queued for a disabled webhook');
        // A negative can only be shown by waiting: past the time the postponed retry was due, nothing came.
        const wasDue = Date.parse(p.attempts[0].next_attempt_at);
        await pause(Math.max(0, wasDue - Date.now()) + 500);
        assert.equal(receiver.received.length, 2, 'nothing is sent to a disabled webhook');

        const enabled = await h.request('POST', `/instances/${instanceId}/webhooks/${webhookId}/enabled`, {
          body: { enabled: true },
        });
        assert.equal(enabled.status, 200);
        const later = await publish(h, instanceId);
        const arrivals = await receiver.waitFor(3);
        assert.deepEqual(
          arrivals.map((r) => r.body.event_id),
          [waiting, gone, later],
        );
      },
    ));

  test('429 with Retry-After in seconds: the next attempt waits that long', () =>
    withHook(
      (n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }),
      async ({ instanceId, webhookId, receiver }) => {
        const eventId = await publish(h, instanceId);
        assertGaps(await receiver.waitFor(2), [1000], SLACK_MS);
        const d = await settled(h, instanceId, webhookId, eventId);
        assert.equal(d.status, 'delivered');
        assert.equal(d.attempts[0].status_code, 429);
        assert.equal(d.attempts[0].next_attempt_reason, 'retry-after');
      },
    ));

  test('429 with Retry-After as an HTTP date: the next attempt is no earlier than that date', () => {
    let retryAt = 0;
    return withHook(
      (n) => {
        if (n > 0) return { status: 200 };
        // A whole second (HTTP dates have no fractions) 1 to 2 s ahead, within the 2 s cap.
        retryAt = Math.ceil((Date.now() + 1000) / 1000) * 1000;
        return { status: 429, headers: { 'retry-after': new Date(retryAt).toUTCString() } };
      },
      async ({ instanceId, receiver }) => {
        await publish(h, instanceId);
        const [, second] = await receiver.waitFor(2);
        assert.ok(second.at >= retryAt, `retried ${retryAt - second.at} ms before the Retry-After date`);
        assert.ok(
          second.at < retryAt + SLACK_MS,
          `retried ${second.at - retryAt} ms after the Retry-After date`,
        );
      },
    );
  });

  test('429 with a Retry-After beyond MAX_RETRY_AFTER_S: postponed by the cap only', () =>
    withHook(
      (n) => (n === 0 ? { status: 429, headers: { 'retry-after': '7200' } } : { status: 200 }),
      async ({ instanceId, webhookId, receiver }) => {
        const eventId = await publish(h, instanceId);
        assertGaps(await receiver.waitFor(2), [MAX_RETRY_AFTER_S * 1000], SLACK_MS);
        assert.equal((await settled(h, instanceId, webhookId, eventId)).status, 'delivered');
      },
    ));

  test('a 429 counts toward the limit of 6 attempts', () =>
    withHook(
      () => ({ status: 429, headers: { 'retry-after': '0' } }),
      async ({ instanceId, webhookId, receiver }) => {
        const eventId = await publish(h, instanceId);
        await receiver.waitFor(6);
        const d = await settled(h, instanceId, webhookId, eventId);
        assert.equal(d.failure_reason, 'attempts_exhausted');
        assert.equal(d.attempt_count, 6);
        assert.equal(receiver.received.length, 6);
      },
    ));

  test('a 10 KB answer: its first 4 KiB are kept in the attempt log', async () => {
    const big = Array.from({ length: 10_240 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    await withHook(
      (n) => ({ status: n === 0 ? 500 : 200, body: big }),
      async ({ instanceId, webhookId }) => {
        const eventId = await publish(h, instanceId);
        const d = await settled(h, instanceId, webhookId, eventId);
        assert.equal(d.status, 'delivered');
        for (const a of d.attempts) assert.equal(a.response_body, big.slice(0, 4096));
      },
    );
  });
});
