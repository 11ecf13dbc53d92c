/** Operational events' pure rules (src/domain/operational-events.ts): who receives one, and a streak's turns. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HealthChange } from '../../src/domain/health.ts';
import {
  announcementTargets,
  deliveryFailed,
  OPERATOR_WEBHOOK_ID,
  type Streak,
  streakTurns,
  webhookDisabled,
} from '../../src/domain/operational-events.ts';
import type { Webhook } from '../../src/domain/types.ts';

const webhook = (id: string, events: string[], extra: Partial<Webhook> = {}): Webhook => ({
  webhook_id: id,
  instance_id: 'ins_a',
  destination_url: `https://hooks.example.com/${id}`,
  events,
  ignore_status: false,
  enabled: true,
  secret_sealed: null,
  disabled_reason: null,
  disabled_at: null,
  created_at: 0,
  updated_at: 0,
  ...extra,
});

test('an announcement goes to webhooks naming it, the operator, never `*` alone nor the webhook it is about', () => {
  const about = webhook('whk_about', ['webhook.disabled', 'message']);
  const a = webhookDisabled(about, 'gone', 1_000);
  const targets = announcementTargets(a, [
    about,
    webhook('whk_named', ['webhook.disabled']),
    webhook('whk_star', ['*']),
    webhook('whk_star_and_named', ['*', 'webhook.disabled']),
    webhook('whk_other_kind', ['delivery.failed']),
    webhook('whk_filtered_out', ['webhook.disabled'], { filter: { 'payload.reason': 'manual' } }),
    webhook(OPERATOR_WEBHOOK_ID, ['webhook.disabled', 'delivery.failed']),
  ]);
  assert.deepEqual(
    targets.map((w) => w.webhook_id),
    ['whk_named', 'whk_star_and_named', OPERATOR_WEBHOOK_ID],
  );
  assert.equal(a.draft.instance_id, 'ins_a');
  assert.deepEqual(JSON.parse(a.draft.body).payload, {
    webhook_id: 'whk_about',
    destination_url: 'https://hooks.example.com/whk_about',
    reason: 'gone',
    disabled_at: '1970-01-01T00:00:01.000Z',
  });
});

test("nothing is said of the operator's own destination", () => {
  const failed = deliveryFailed(
    {
      delivery_id: 'dlv_1',
      event_id: 'evt_1',
      event: 'delivery.failed',
      instance_id: 'ins_a',
      webhook_id: OPERATOR_WEBHOOK_ID,
      failure_reason: 'attempts_exhausted',
      last_status_code: 500,
      last_error: null,
    },
    1,
  );
  assert.deepEqual(announcementTargets(failed, [webhook('whk_named', ['delivery.failed'])]), []);
});

const change = (webhook_id: string, c: Partial<HealthChange>): HealthChange => ({
  webhook_id,
  hours: [],
  last_delivered_at: null,
  last_failed_at: null,
  failures: 0,
  failing_since: null,
  leading_failures: 0,
  ...c,
});
const streak = (
  consecutive_failures: number,
  failing_since: number | null,
  announced: number | null,
): Streak => ({
  consecutive_failures,
  failing_since,
  failing_announced_at: announced,
});
const POLICY = { failingAfter: 20, disableAfterFailingMs: 3_600_000 };

test('a streak reaching FAILING_AFTER is failing, once; a delivery after it recovers it, with the failures it ended', () => {
  const now = 10_000_000;
  const crossing = streakTurns(
    [change('whk_a', { failures: 3, failing_since: 5 })],
    new Map([['whk_a', streak(18, 1, null)]]),
    new Map([['whk_a', streak(21, 1, null)]]),
    POLICY,
    now,
  );
  assert.deepEqual(crossing.failing, [{ webhook_id: 'whk_a', consecutive_failures: 21, failing_since: 1 }]);
  const again = streakTurns(
    [change('whk_a', { failures: 1 })],
    new Map([['whk_a', streak(21, 1, now)]]),
    new Map([['whk_a', streak(22, 1, now)]]),
    POLICY,
    now,
  );
  assert.deepEqual(again.failing, [], 'announced already');
  const recovered = streakTurns(
    [change('whk_a', { last_delivered_at: now, leading_failures: 2, failures: 0 })],
    new Map([['whk_a', streak(22, 1, now)]]),
    new Map([['whk_a', streak(0, null, null)]]),
    POLICY,
    now,
  );
  assert.deepEqual(recovered.recovered, [{ webhook_id: 'whk_a', after_failures: 24 }]);
  const quiet = streakTurns(
    [change('whk_a', { last_delivered_at: now })],
    new Map([['whk_a', streak(5, 1, null)]]),
    new Map([['whk_a', streak(0, null, null)]]),
    POLICY,
    now,
  );
  assert.deepEqual(
    quiet,
    { recovered: [], failing: [], failedTooLong: [] },
    'never announced: nothing to recover',
  );
});

test('failing for DISABLE_AFTER_FAILING_S, judged at a failure; never when it is unset', () => {
  const since = 1_000;
  const turns = (now: number, afterMs: number | null) =>
    streakTurns(
      [change('whk_a', { failures: 1 })],
      new Map(),
      new Map([['whk_a', streak(3, since, null)]]),
      { failingAfter: 20, disableAfterFailingMs: afterMs },
      now,
    ).failedTooLong;
  assert.deepEqual(turns(since + 3_599_999, 3_600_000), []);
  assert.deepEqual(turns(since + 3_600_000, 3_600_000), ['whk_a']);
  assert.deepEqual(turns(since + 99 * 3_600_000, null), []);
});
