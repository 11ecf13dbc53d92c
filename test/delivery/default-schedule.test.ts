/** Seed §3.2, §8 on the real clock: the default schedule 5, 10, 20, 40, 80 s, then failed. Takes ~155 s. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestHerald } from '../support/herald.ts';
import { assertGaps, hook, publish, settled } from './helpers.ts';

const DEFAULT_STEPS_MS = [5_000, 10_000, 20_000, 40_000, 80_000];
/** Upper slack on each gap (the dispatcher wakes at the due time; this covers a loaded machine). */
const SLACK_MS = 1_500;

test('the default schedule: 6 attempts 5, 10, 20, 40, 80 s apart, then failed', {
  timeout: 200_000,
}, async (t) => {
  // No RETRY_SCHEDULE, no DELIVERY_TIMEOUT_MS: the defaults of SPEC §1.
  const h = await startTestHerald();
  const { instanceId, webhookId, receiver } = await hook(h);
  receiver.answer = () => ({ status: 500 });
  try {
    const publishedAt = Date.now();
    const eventId = await publish(h, instanceId);
    const arrivals = await receiver.waitFor(6, 190_000);
    t.diagnostic(`gaps (ms): ${arrivals.slice(1).map((r, i) => r.at - arrivals[i].at)}`);
    assert.ok(arrivals[0].at - publishedAt < 1000, 'the first attempt starts at once');
    assertGaps(arrivals, DEFAULT_STEPS_MS, SLACK_MS);
    const d = await settled(h, instanceId, webhookId, eventId);
    assert.equal(d.status, 'failed');
    assert.equal(d.failure_reason, 'attempts_exhausted');
    assert.equal(d.attempt_count, 6);
    assert.ok(d.attempts.every((a: any) => a.status_code === 500));
    assert.equal(receiver.received.length, 6);
  } finally {
    await receiver.close();
    await h.close();
  }
});
