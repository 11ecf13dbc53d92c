/** herald.outcome, from the retry policy's decision: disabled only when the answer disabled the webhook. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decide } from '../../src/domain/retry-policy.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';
import { attemptOutcome } from '../../src/telemetry/attempt-spans.ts';

const rules = { schedule: [5, 10], maxRetryAfterS: 3600 };
const answered = (status_code: number | null, error: string | null = null): AttemptOutcome => ({
  started_at: 0,
  duration_ms: 1,
  status_code,
  error,
  response_body: null,
  retry_after: null,
});

test('delivered, retry, failed when the delivery ends otherwise, disabled on a 410', () => {
  assert.equal(attemptOutcome(decide(answered(200), 1, 0, rules)), 'delivered');
  assert.equal(attemptOutcome(decide({ ...answered(null), acknowledged: true }, 1, 0, rules)), 'delivered');
  assert.equal(attemptOutcome(decide(answered(500), 1, 0, rules)), 'retry');
  assert.equal(attemptOutcome(decide(answered(null, 'timeout'), 2, 0, rules)), 'retry');
  assert.equal(attemptOutcome(decide(answered(500), 3, 0, rules)), 'failed', 'the last attempt');
  assert.equal(attemptOutcome(decide(answered(null, 'destination_not_allowed'), 1, 0, rules)), 'failed');
  assert.equal(attemptOutcome(decide(answered(410), 1, 0, rules)), 'disabled');
});
