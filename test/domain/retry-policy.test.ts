import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decide, retryAfterMs } from '../../src/domain/retry-policy.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';

const rules = { schedule: [5, 10, 20, 40, 80], maxRetryAfterS: 3600 };
const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

function outcome(status_code: number | null, extra: Partial<AttemptOutcome> = {}): AttemptOutcome {
  return {
    started_at: NOW - 100,
    duration_ms: 100,
    status_code,
    error: status_code === null ? 'timeout' : null,
    response_body: null,
    retry_after: null,
    ...extra,
  };
}

describe('retry policy: seed §3.2 and §7', () => {
  test('any 2xx is delivered, on any attempt', () => {
    for (const code of [200, 201, 202, 204, 299]) {
      for (const attempt of [1, 6])
        assert.deepEqual(decide(outcome(code), attempt, NOW, rules), { kind: 'delivered' });
    }
  });

  test("a broker's acknowledgement is delivered, on any attempt", () => {
    const ack = outcome(null, { error: null, response_body: 'broker_ack', acknowledged: true });
    for (const attempt of [1, 6]) assert.deepEqual(decide(ack, attempt, NOW, rules), { kind: 'delivered' });
  });

  test('non-2xx or no answer before the 6th attempt waits 5, 10, 20, 40, 80 s after the attempt ends', () => {
    const cases: [number | null, number, number][] = [
      [500, 1, 5],
      [null, 2, 10],
      [404, 3, 20],
      [301, 4, 40],
      [199, 5, 80],
    ];
    for (const [code, attempt, seconds] of cases) {
      assert.deepEqual(decide(outcome(code), attempt, NOW, rules), {
        kind: 'retry',
        at: NOW + seconds * 1000,
        reason: 'schedule',
      });
    }
  });

  test('the 6th failed attempt fails the delivery permanently', () => {
    for (const code of [500, null, 429, 302]) {
      assert.deepEqual(decide(outcome(code, { retry_after: '1' }), 6, NOW, rules), {
        kind: 'failed',
        reason: 'attempts_exhausted',
        disableWebhook: false,
      });
    }
  });

  test('410 fails the delivery and disables the webhook, whatever the attempt', () => {
    for (const attempt of [1, 3, 6]) {
      assert.deepEqual(decide(outcome(410), attempt, NOW, rules), {
        kind: 'failed',
        reason: 'gone',
        disableWebhook: true,
      });
    }
  });

  test('a destination the guard refuses fails the delivery at once, whatever the attempt', () => {
    for (const attempt of [1, 3, 6]) {
      assert.deepEqual(decide(outcome(null, { error: 'destination_not_allowed' }), attempt, NOW, rules), {
        kind: 'failed',
        reason: 'destination_not_allowed',
        disableWebhook: false,
      });
    }
  });

  test('429 with Retry-After in seconds postpones to the requested time', () => {
    assert.deepEqual(decide(outcome(429, { retry_after: '120' }), 1, NOW, rules), {
      kind: 'retry',
      at: NOW + 120_000,
      reason: 'retry-after',
    });
  });

  test('429 with Retry-After as an HTTP date postpones to that date', () => {
    const date = new Date(NOW + 90_000).toUTCString();
    assert.deepEqual(decide(outcome(429, { retry_after: date }), 2, NOW, rules), {
      kind: 'retry',
      at: NOW + 90_000,
      reason: 'retry-after',
    });
  });

  test('Retry-After is capped at one hour', () => {
    for (const header of ['7200', new Date(NOW + 86_400_000).toUTCString()]) {
      const d = decide(outcome(429, { retry_after: header }), 1, NOW, rules);
      assert.deepEqual(d, { kind: 'retry', at: NOW + 3_600_000, reason: 'retry-after' });
    }
  });

  test('429 without a readable Retry-After follows the schedule', () => {
    for (const header of [null, 'soon', '-5', '1.5']) {
      assert.deepEqual(decide(outcome(429, { retry_after: header }), 1, NOW, rules), {
        kind: 'retry',
        at: NOW + 5000,
        reason: 'schedule',
      });
    }
  });

  test('a shorter RETRY_SCHEDULE changes both the waits and the attempt limit', () => {
    const short = { schedule: [1, 2], maxRetryAfterS: 3600 };
    assert.deepEqual(decide(outcome(500), 2, NOW, short), {
      kind: 'retry',
      at: NOW + 2000,
      reason: 'schedule',
    });
    assert.equal(decide(outcome(500), 3, NOW, short).kind, 'failed');
  });

  test('an HTTP date in the past means retry at once', () => {
    assert.equal(retryAfterMs(new Date(NOW - 5000).toUTCString(), NOW), 0);
  });
});
