/** A webhook's health from a batch of outcomes (src/domain/health.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstCountedHour, HOUR_MS, healthChanges } from '../../src/domain/health.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';

const at = (started_at: number, status_code: number | null): AttemptOutcome => ({
  started_at,
  duration_ms: 10,
  status_code,
  error: status_code === null ? 'timeout' : null,
  response_body: null,
  retry_after: null,
});
const H = 1_000 * HOUR_MS;

test('per webhook: attempts and deliveries per hour, the last of each, and the failures after the last success', () => {
  const changes = healthChanges([
    { webhook_id: 'whk_a', outcome: at(H + 500, 500), end: 'retry' },
    { webhook_id: 'whk_a', outcome: at(H + 100, 200), end: 'delivered' },
    { webhook_id: 'whk_a', outcome: at(H + HOUR_MS + 5, null), end: 'retry' },
    { webhook_id: 'whk_b', outcome: at(H + 50, 503), end: 'retry' },
  ]).sort((a, b) => a.webhook_id.localeCompare(b.webhook_id));
  assert.deepEqual(changes, [
    {
      webhook_id: 'whk_a',
      hours: [
        { hour: H, attempts: 2, delivered: 1, failed: 0, retried: 0 },
        { hour: H + HOUR_MS, attempts: 1, delivered: 0, failed: 0, retried: 0 },
      ],
      last_delivered_at: H + 110,
      last_failed_at: H + HOUR_MS + 15,
      failures: 2,
      // The streak after the delivery began with the failure that followed it.
      failing_since: H + 510,
      leading_failures: 0,
    },
    {
      webhook_id: 'whk_b',
      hours: [{ hour: H, attempts: 1, delivered: 0, failed: 0, retried: 0 }],
      last_delivered_at: null,
      last_failed_at: H + 60,
      failures: 1,
      failing_since: H + 60,
      leading_failures: 0,
    },
  ]);
});

test('the 24-hour figures count the current hour and the 23 before it', () => {
  assert.equal(firstCountedHour(H + 1234), H - 23 * HOUR_MS);
});

test('a delivery ends the failures before it in the batch, and the streak starts again after it', () => {
  const [c] = healthChanges([
    { webhook_id: 'whk_a', outcome: at(H + 1, 500), end: 'retry' },
    { webhook_id: 'whk_a', outcome: at(H + 2, 500), end: 'retry' },
    { webhook_id: 'whk_a', outcome: at(H + 3, 200), end: 'delivered' },
    { webhook_id: 'whk_a', outcome: at(H + 4, 500), end: 'retry' },
    { webhook_id: 'whk_a', outcome: at(H + 5, 200), end: 'delivered' },
  ]);
  assert.equal(c.leading_failures, 2, 'the first delivery ends the two failures before it');
  assert.equal(c.failures, 0);
  assert.equal(c.failing_since, null, 'no failure after the last delivery');
});

test('an attempt counts in the hour it started, its delivery in the hour it ended; a retry only once it is made', () => {
  const long = (started_at: number, status_code: number): AttemptOutcome => ({
    ...at(started_at, status_code),
    duration_ms: 2_000,
  });
  const [c] = healthChanges([
    // Started in the last second of hour H, answered in hour H+1.
    { webhook_id: 'whk_a', outcome: long(H + HOUR_MS - 1_000, 200), end: 'delivered' },
    { webhook_id: 'whk_a', outcome: long(H + HOUR_MS - 500, 500), end: 'failed' },
    { webhook_id: 'whk_a', outcome: long(H + HOUR_MS - 100, 503), end: 'retry' },
  ]);
  assert.deepEqual(
    c.hours.sort((a, b) => a.hour - b.hour),
    [
      { hour: H, attempts: 3, delivered: 0, failed: 0, retried: 0 },
      { hour: H + HOUR_MS, attempts: 0, delivered: 1, failed: 1, retried: 0 },
    ],
  );
});

test('a redelivered failure had not ended: taken back from its hour, and counted as followed by another', () => {
  const [c] = healthChanges([
    {
      webhook_id: 'whk_a',
      outcome: at(H + HOUR_MS + 5, 200),
      end: 'delivered',
      // The attempt before failed the delivery in hour H; a redelivery brought it back.
      previous: { started_at: H + 100, duration_ms: 10, ended: true },
    },
  ]);
  assert.deepEqual(
    c.hours.sort((a, b) => a.hour - b.hour),
    [
      { hour: H, attempts: 0, delivered: 0, failed: -1, retried: 1 },
      { hour: H + HOUR_MS, attempts: 1, delivered: 1, failed: 0, retried: 0 },
    ],
  );
});
