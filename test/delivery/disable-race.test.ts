/**
 * Every attempt made is in the delivery log and counted on its delivery, whatever ends the delivery: here a webhook
 * disabled (by request, or by a 410 of another of its deliveries) while an attempt is in flight, its answer
 * recorded after the disable.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PostgresOutcomes } from '../../src/store/outcome/postgres.ts';
import { SqliteOutcomes } from '../../src/store/outcome/sqlite.ts';
import type { AttemptResult } from '../../src/store/records.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { onPostgres } from '../support/postgres.ts';
import type { Received } from '../support/receiver.ts';
import { delivery, getWebhook, type Hook, hook, publish } from './helpers.ts';

const TOO_MANY = { status: 429, headers: { 'retry-after': '1' } };

describe('a webhook disabled while an attempt is in flight', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({ RETRY_SCHEDULE: '1,1,1,1,1', MAX_RETRY_AFTER_S: '1' });
  });
  after(() => h.close());

  const disable = (k: Hook) =>
    h.request('POST', `/instances/${k.instanceId}/webhooks/${k.webhookId}/enabled`, {
      body: { enabled: false },
    });
  const seenFor = (k: Hook, eventId: string) =>
    k.receiver.received.filter((r: Received) => r.body?.event_id === eventId).length;

  /**
   * Waits until the delivery has ended and logged as many attempts as its receiver saw requests (failing after a
   * timeout when it never does), then checks the delivery counts them too.
   */
  async function assertEveryAttemptLogged(k: Hook, eventId: string, iteration: number) {
    const d = await eventually(
      async () => {
        const d = await delivery(h, k.instanceId, k.webhookId, eventId);
        return d.status !== 'pending' && d.attempts.length === seenFor(k, eventId) ? d : undefined;
      },
      5000,
      `run ${iteration}: ${seenFor(k, eventId)} request(s) seen, all of them in the delivery log`,
    );
    assert.equal(d.status, 'failed');
    assert.equal(d.failure_reason, 'webhook_disabled');
    assert.equal(
      d.attempt_count,
      d.attempts.length,
      `run ${iteration}: attempt_count is the log length ${JSON.stringify(d)}`,
    );
    assert.equal(d.last_status_code, 429, `run ${iteration}: the last result is the attempt's`);
    return d;
  }

  test('a 429 answered once the webhook is disabled is logged and counted', async () => {
    for (let i = 0; i < 10; i++) {
      const k = await hook(h);
      try {
        // The answer waits for the disable: its outcome is always recorded after it.
        k.receiver.answer = async () => {
          assert.equal((await disable(k)).status, 200);
          return TOO_MANY;
        };
        const eventId = await publish(h, k.instanceId);
        const d = await assertEveryAttemptLogged(k, eventId, i);
        assert.equal(d.attempt_count, 1);
      } finally {
        await k.receiver.close();
      }
    }
  });

  test('a 429 whose outcome is held back until after the disable is logged and counted, and decides nothing', async () => {
    // Held on purpose, so that the race is certain: the receiver has answered, the outcome waits to be written,
    // and the webhook is disabled meanwhile.
    const queue = (onPostgres ? PostgresOutcomes : SqliteOutcomes).prototype as {
      recordAttempts(results: AttemptResult[], now: number): Promise<void>;
    };
    const record = queue.recordAttempts;
    let release: () => void = () => {};
    const gate = new Promise<void>((done) => {
      release = done;
    });
    let held = 0;
    queue.recordAttempts = async function (this: unknown, results, now) {
      held += results.length;
      await gate;
      return record.call(this, results, now);
    };
    const k = await hook(h);
    try {
      k.receiver.answer = () => TOO_MANY;
      const eventId = await publish(h, k.instanceId);
      await eventually(async () => (held === 1 ? true : undefined), 5000, 'the outcome, held back');
      assert.equal((await disable(k)).status, 200);
      queue.recordAttempts = record;
      release();
      const d = await assertEveryAttemptLogged(k, eventId, 0);
      assert.deepEqual([d.attempt_count, d.attempts[0].status_code], [1, 429]);
      await new Promise((r) => setTimeout(r, 1500)); // past the 429's Retry-After: nothing is sent again
      assert.equal(seenFor(k, eventId), 1);
    } finally {
      queue.recordAttempts = record;
      release();
      await k.receiver.close();
    }
  });

  test('a 429 and a disable racing: every request the receiver saw is an attempt in the log', async () => {
    for (let i = 0; i < 30; i++) {
      const k = await hook(h);
      try {
        let disabled: Promise<unknown> = Promise.resolve();
        k.receiver.answer = () => {
          disabled = disable(k);
          return TOO_MANY;
        };
        const eventId = await publish(h, k.instanceId);
        await k.receiver.waitFor(1);
        await disabled;
        await assertEveryAttemptLogged(k, eventId, i);
      } finally {
        await k.receiver.close();
      }
    }
  });

  test('a 410 disabling its webhook while another of its attempts is in flight: both attempts logged', async () => {
    for (let i = 0; i < 5; i++) {
      const k = await hook(h);
      try {
        // The first request's 429 waits until the second's 410 has disabled the webhook: it is recorded after.
        k.receiver.answer = async (_req, n) => {
          if (n > 0) return { status: 410 };
          await eventually(async () =>
            (await getWebhook(h, k.instanceId, k.webhookId)).enabled ? undefined : true,
          );
          return TOO_MANY;
        };
        const waitingId = await publish(h, k.instanceId);
        await k.receiver.waitFor(1);
        const goneId = await publish(h, k.instanceId);
        const d = await assertEveryAttemptLogged(k, waitingId, i);
        assert.equal(d.attempt_count, 1);
        const gone = await delivery(h, k.instanceId, k.webhookId, goneId);
        assert.deepEqual([gone.failure_reason, gone.attempt_count, gone.attempts.length], ['gone', 1, 1]);
      } finally {
        await k.receiver.close();
      }
    }
  });
});
