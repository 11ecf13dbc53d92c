/** A webhook's stats per hour from its attempt log (src/domain/webhook-stats.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOUR_MS } from '../../src/domain/health.ts';
import { type LoggedAttempt, webhookStats } from '../../src/domain/webhook-stats.ts';

const H = 500_000 * HOUR_MS;
const attempt = (started_at: number, status_code: number | null, more: Partial<LoggedAttempt> = {}) => ({
  started_at,
  duration_ms: 100,
  status_code,
  error: status_code === null ? 'timeout' : null,
  retried: false,
  last: true,
  ...more,
});

test('hours buckets oldest first, each on a UTC hour, the last the present one; empty hours have null times', () => {
  const now = H + 20 * 60_000;
  const buckets = webhookStats([], 3, now);
  assert.deepEqual(
    buckets.map((b) => b.start),
    [H - 2 * HOUR_MS, H - HOUR_MS, H],
  );
  assert.deepEqual(buckets[2], {
    start: H,
    delivered: 0,
    failed: 0,
    retried_attempts: 0,
    p50_ms: null,
    p95_ms: null,
  });
});

test('a delivery counts in the hour its last attempt ended, an attempt in the hour it started', () => {
  const now = H + 30 * 60_000;
  const buckets = webhookStats(
    [
      // Two failures retried, then delivered across the hour's end.
      attempt(H - HOUR_MS + 1_000, 503, { retried: true, last: false }),
      attempt(H - HOUR_MS + 2_000, null, { retried: true, last: false }),
      attempt(H - 50, 200),
      // Failed for good, then redelivered: it had not ended; its retry is not yet made, so nothing more counts.
      attempt(H - HOUR_MS + 3_000, 500, { last: false }),
      attempt(H - HOUR_MS + 4_000, 500, { retried: true }),
      // Failed for good in hour H; a broker's acknowledgement (no status, no error) delivers.
      attempt(H + 1_000, 500),
      attempt(H + 2_000, null, { error: null, duration_ms: 7 }),
      // Before the window: neither it nor its end counts.
      attempt(H - 3 * HOUR_MS, 200),
    ],
    2,
    now,
  );
  assert.deepEqual(
    buckets.map(({ delivered, failed, retried_attempts }) => ({ delivered, failed, retried_attempts })),
    [
      { delivered: 0, failed: 0, retried_attempts: 3 },
      { delivered: 2, failed: 1, retried_attempts: 0 },
    ],
  );
});

test('p50 and p95 are taken over answered attempts only (a timeout has no answer time)', () => {
  const now = H + 1;
  const answered = Array.from({ length: 20 }, (_, i) => attempt(H, 200, { duration_ms: (i + 1) * 10 }));
  const [b] = webhookStats([...answered, attempt(H, null, { duration_ms: 8_000, retried: true })], 1, now);
  assert.equal(b.p50_ms, 100);
  assert.equal(b.p95_ms, 190);
});
