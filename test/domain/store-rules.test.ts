/** The rules both stores apply, written once (src/domain/store-rules.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  disablesWebhook,
  planOutcome,
  redeliveryConflict,
  repeatConflict,
  sessionChange,
} from '../../src/domain/store-rules.ts';
import type { AttemptOutcome, EventDraft } from '../../src/domain/types.ts';

const outcome = (status_code: number | null, response_body: string | null = 'ok'): AttemptOutcome => ({
  started_at: 1000,
  duration_ms: 12,
  status_code,
  error: status_code === null ? 'timeout' : null,
  response_body,
  retry_after: null,
});

test('an outcome planned: the attempt as logged, and what it changes on its delivery', () => {
  assert.deepEqual(planOutcome(outcome(200), { kind: 'delivered' }).delivery, {
    status: 'delivered',
    next_attempt_at: null,
    failure_reason: null,
    last_attempt_at: 1000,
    last_status_code: 200,
    last_error: null,
  });
  const retry = planOutcome(outcome(null), { kind: 'retry', at: 6000, reason: 'schedule' });
  assert.deepEqual(
    [
      retry.delivery.status,
      retry.delivery.next_attempt_at,
      retry.attempt.next_attempt_at,
      retry.attempt.next_attempt_reason,
    ],
    ['pending', 6000, 6000, 'schedule'],
  );
  const gone = { kind: 'failed', reason: 'gone', disableWebhook: true } as const;
  assert.deepEqual(
    [planOutcome(outcome(410), gone).delivery.failure_reason, disablesWebhook(gone)],
    ['gone', true],
  );
  assert.equal(
    disablesWebhook({ kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false }),
    false,
  );
  assert.equal(
    planOutcome(outcome(500, 'a\0b'), gone).attempt.response_body,
    'a\uFFFDb',
    'no NUL reaches a store',
  );
});

test('the last session.status among the new events sets the instance; without a phone there is none', () => {
  const e = (event: string, payload: Record<string, unknown>) => ({ event, payload }) as EventDraft;
  assert.equal(sessionChange([e('message', {})]), null);
  assert.deepEqual(sessionChange([e('session.status', { status: 'SCAN_QR_CODE' })]), {
    status: 'SCAN_QR_CODE',
    phone: null,
  });
  assert.deepEqual(
    sessionChange([
      e('session.status', { status: 'STARTING' }),
      e('message', {}),
      e('session.status', { status: 'WORKING', phone: '4917' }),
    ]),
    { status: 'WORKING', phone: '4917' },
  );
});

test('redelivery: only failed deliveries of enabled webhooks; a repeated event_id only on its own instance', () => {
  assert.equal(redeliveryConflict({ status: 'failed', webhook_id: 'whk_1' }, true), null);
  assert.equal(
    redeliveryConflict({ status: 'pending', webhook_id: 'whk_1' }, true),
    'delivery is pending; only failed deliveries can be redelivered',
  );
  assert.equal(
    redeliveryConflict({ status: 'failed', webhook_id: 'whk_1' }, false),
    'webhook whk_1 is disabled; enable it before redelivering',
  );
  assert.equal(repeatConflict('evt_1', 'ins_a', 'ins_a'), null);
  assert.equal(
    repeatConflict('evt_1', 'ins_a', 'ins_b'),
    'event_id evt_1 was already published to another instance',
  );
});
