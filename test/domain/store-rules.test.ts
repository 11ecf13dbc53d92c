/** The rules both stores apply, written once (src/domain/store-rules.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  disablesWebhook,
  planOutcome,
  redeliveryConflict,
  repeatConflict,
  secretInGrace,
  sessionChange,
} from '../../src/domain/store-rules.ts';
import type { AttemptOutcome, EventDraft } from '../../src/domain/types.ts';
import { claimOf } from '../../src/store/rows.ts';

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

test('the newest session.status among the new events sets the instance, with its phone or none', () => {
  const e = (event: string, payload: Record<string, unknown>, timestamp = 0, event_id = 'evt_a') =>
    ({ event, payload, timestamp, event_id }) as EventDraft;
  assert.equal(sessionChange([e('message', {})]), null);
  assert.deepEqual(sessionChange([e('session.status', { status: 'SCAN_QR_CODE' }, 5)]), {
    status: 'SCAN_QR_CODE',
    phone: null,
    at: 5,
    event_id: 'evt_a',
  });
  // By their timestamps, not their order: the engine's posts arrive in any order.
  assert.deepEqual(
    sessionChange([
      e('session.status', { status: 'WORKING', phone: '4917' }, 30, 'evt_c'),
      e('message', {}, 40, 'evt_d'),
      e('session.status', { status: 'STARTING', phone: '4916' }, 10, 'evt_b'),
    ]),
    { status: 'WORKING', phone: '4917', at: 30, event_id: 'evt_c' },
  );
  assert.equal(
    sessionChange([
      e('session.status', { status: 'SCAN_QR_CODE' }, 30, 'evt_b'),
      e('session.status', { status: 'WORKING' }, 30, 'evt_c'),
      e('session.status', { status: 'STARTING' }, 30, 'evt_a'),
    ])?.status,
    'WORKING',
    'a tie: the greater event_id',
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

test('a rotated-out secret signs while its grace lasts, up to but not at its end', () => {
  const rotated = (until: number | null | undefined) => ({
    previous_secret_sealed: 'old',
    previous_secret_until: until,
  });
  assert.equal(secretInGrace(rotated(2000), 1999), 'old');
  assert.equal(secretInGrace(rotated(2000), 2000), null, 'ended at its end');
  assert.equal(secretInGrace(rotated(2000), 2001), null);
  assert.equal(secretInGrace(rotated(null), 0), null, 'no grace, no secret');
  assert.equal(secretInGrace(rotated(undefined), 0), null);
  assert.equal(secretInGrace({ previous_secret_until: 2000 }, 1000), null, 'a grace without a secret');
});

test('a claim: the webhook part, the old secret only in its grace, attempt numbers counting this one', () => {
  const webhook = {
    webhook_id: 'whk_1',
    destination_url: 'amqp://guest:****@broker.example/?exchange=x&routing_key=k',
    destination_sealed: 'sealed-url',
    secret_sealed: 'new',
    previous_secret_sealed: 'old',
    previous_secret_until: 2000,
    headers_sealed: 'hdr',
    rate_limit: 5,
    standard_webhooks: true,
  };
  const claim = claimOf(
    webhook,
    1000,
    'lease_1',
    1200,
    'dlv_1',
    'evt_1',
    'ins_1',
    3,
    1,
    'manual',
    '{}',
    '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  );
  assert.deepEqual(claim, {
    delivery_id: 'dlv_1',
    event_id: 'evt_1',
    instance_id: 'ins_1',
    webhook_id: 'whk_1',
    destination_url: 'amqp://guest:****@broker.example/?exchange=x&routing_key=k',
    destination_sealed: 'sealed-url',
    secret_sealed: 'new',
    previous_secret_sealed: 'old',
    headers_sealed: 'hdr',
    standard_webhooks: true,
    body: '{}',
    start_at: 1200,
    rate_limit: 5,
    cycle_attempt: 2,
    attempt: 4,
    trigger: 'manual',
    lease_token: 'lease_1',
    trace_context: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  });
  assert.equal(
    claimOf(webhook, 2000, 'lease_1', 0, 'dlv_1', 'evt_1', 'ins_1', 0, 0, 'scheduled', '{}', null)
      .previous_secret_sealed,
    null,
    'the grace has ended',
  );
  // A Webhook may leave its optional columns out: a claim says null.
  const bare = claimOf(
    { webhook_id: 'whk_2', destination_url: 'https://example.test/2', secret_sealed: null },
    1000,
    'lease_2',
    0,
    'dlv_2',
    'evt_2',
    'ins_2',
    0,
    0,
    'scheduled',
    '{}',
    null,
  );
  assert.deepEqual(
    [
      bare.previous_secret_sealed,
      bare.headers_sealed,
      bare.rate_limit,
      bare.standard_webhooks,
      bare.attempt,
      bare.cycle_attempt,
    ],
    [null, null, null, false, 1, 1],
  );
});
