/**
 * Operational events: what Herald says about its own deliveries, as events of the instance they concern. Pure: the
 * store builds them in the transaction of what they report (a disable, a failed delivery, a streak crossing), so
 * that one is stored exactly when that is, and sends them through the same pipeline as every other event.
 *
 *   webhook.disabled   a webhook stopped: a 410 (gone), failing for DISABLE_AFTER_FAILING_S (failing), or a person
 *   webhook.failing    its failed attempts in a row reached FAILING_AFTER; once per streak
 *   webhook.recovered  its first delivered attempt after a webhook.failing
 *   delivery.failed    a delivery failed by its attempts (its schedule ran out, a 410, a refused destination); one
 *                      ended because its webhook was disabled is not reported one by one: webhook.disabled says it
 *
 * They go to the instance's webhooks that name them (`*` does not include them), except the webhook they are about,
 * and to the operator's destination (OPERATOR_WEBHOOK_URL), which receives every instance's.
 */
import { eventBody } from './event-body.ts';
import { OPERATIONAL_KINDS } from './event-kinds.ts';
import type { HealthChange } from './health.ts';
import { newId } from './ids.ts';
import { route } from './routing.ts';
import type { EventDraft, Webhook } from './types.ts';

export { OPERATIONAL_KINDS };

const isoTime = (ms: number) => new Date(ms).toISOString();

/** The operator's destination: one webhook row of no instance, configured at start. */
export const OPERATOR_WEBHOOK_ID = 'whk_operator';

/** FAILING_AFTER's default: failed attempts in a row that make a webhook failing. */
export const FAILING_AFTER = 20;

/** Why a webhook was disabled, as webhook.disabled says it; the webhook's `disabled_reason` is "disabled" by hand. */
export type DisableReason = 'gone' | 'failing' | 'manual';
export const disableReason = (stored: string): DisableReason =>
  stored === 'gone' || stored === 'failing' ? stored : 'manual';

/** An operational event, and the webhook it is about (which does not receive it). */
export interface Announcement {
  draft: EventDraft;
  about: string;
}

type Subject = Pick<Webhook, 'webhook_id' | 'instance_id' | 'destination_url'>;

function announcement(
  w: Subject,
  event: string,
  payload: Record<string, unknown>,
  now: number,
): Announcement {
  const e = { event_id: newId('evt', now), event, instance_id: w.instance_id, timestamp: now, payload };
  return { draft: { ...e, body: eventBody(e) }, about: w.webhook_id };
}

export const webhookDisabled = (w: Subject, reason: DisableReason, now: number): Announcement =>
  announcement(
    w,
    'webhook.disabled',
    {
      webhook_id: w.webhook_id,
      destination_url: w.destination_url,
      reason,
      disabled_at: isoTime(now),
    },
    now,
  );

export const webhookFailing = (
  w: Subject,
  streak: { consecutive_failures: number; failing_since: number },
  now: number,
): Announcement =>
  announcement(
    w,
    'webhook.failing',
    {
      webhook_id: w.webhook_id,
      destination_url: w.destination_url,
      consecutive_failures: streak.consecutive_failures,
      failing_since: isoTime(streak.failing_since),
    },
    now,
  );

export const webhookRecovered = (w: Subject, afterFailures: number, now: number): Announcement =>
  announcement(
    w,
    'webhook.recovered',
    { webhook_id: w.webhook_id, destination_url: w.destination_url, after_failures: afterFailures },
    now,
  );

/** A delivery as it stands once failed. */
export interface FailedDelivery {
  delivery_id: string;
  event_id: string;
  event: string;
  instance_id: string;
  webhook_id: string;
  failure_reason: string;
  last_status_code: number | null;
  last_error: string | null;
}

export const deliveryFailed = (d: FailedDelivery, now: number): Announcement => {
  const e = {
    event_id: newId('evt', now),
    event: 'delivery.failed',
    instance_id: d.instance_id,
    timestamp: now,
    payload: {
      delivery_id: d.delivery_id,
      event_id: d.event_id,
      event: d.event,
      webhook_id: d.webhook_id,
      failure_reason: d.failure_reason,
      last_status_code: d.last_status_code,
      last_error: d.last_error,
    },
  };
  return { draft: { ...e, body: eventBody(e) }, about: d.webhook_id };
};

/**
 * Who receives an announcement: of the instance's enabled webhooks (and the operator's, when configured), those
 * subscribed to it by name and whose filter passes it, except the webhook it is about. Nothing is said of the
 * operator's own destination: it is the operator's, not the instance's, and a failing one must not feed itself.
 */
export function announcementTargets(a: Announcement, webhooks: readonly Webhook[]): Webhook[] {
  if (a.about === OPERATOR_WEBHOOK_ID) return [];
  return route(
    a.draft,
    webhooks.filter((w) => w.webhook_id !== a.about),
  );
}

/** When webhooks become failing, and when failing too long disables them: FAILING_AFTER, DISABLE_AFTER_FAILING_S. */
export interface FailingPolicy {
  failingAfter: number;
  /** Null: never. */
  disableAfterFailingMs: number | null;
}

export const DEFAULT_FAILING: FailingPolicy = { failingAfter: FAILING_AFTER, disableAfterFailingMs: null };

/** A webhook's streak of failures as its health record holds it. */
export interface Streak {
  consecutive_failures: number;
  failing_since: number | null;
  /** When webhook.failing was announced for this streak; null before (and after a delivery ends it). */
  failing_announced_at: number | null;
}

/** What one batch of outcomes did to webhooks' streaks of failures: what to announce, and what to disable. */
export interface StreakTurns {
  recovered: { webhook_id: string; after_failures: number }[];
  failing: { webhook_id: string; consecutive_failures: number; failing_since: number }[];
  failedTooLong: string[];
}

/**
 * The turns of a batch, from each webhook's streak before and after the store added the batch's change to it: a
 * delivery after an announced streak recovers it (the failures it ends: those before, and those before it in the
 * batch); a streak at FAILING_AFTER not yet announced is failing; one failing for DISABLE_AFTER_FAILING_S is
 * disabled.
 */
export function streakTurns(
  changes: readonly HealthChange[],
  before: ReadonlyMap<string, Streak>,
  after: ReadonlyMap<string, Streak>,
  policy: FailingPolicy,
  now: number,
): StreakTurns {
  const turns: StreakTurns = { recovered: [], failing: [], failedTooLong: [] };
  for (const c of changes) {
    const was = before.get(c.webhook_id);
    const is = after.get(c.webhook_id);
    if (!is) continue; // the webhook is gone
    if (c.last_delivered_at !== null && was?.failing_announced_at != null) {
      turns.recovered.push({
        webhook_id: c.webhook_id,
        after_failures: was.consecutive_failures + c.leading_failures,
      });
    }
    if (is.failing_announced_at === null && is.consecutive_failures >= policy.failingAfter) {
      turns.failing.push({
        webhook_id: c.webhook_id,
        consecutive_failures: is.consecutive_failures,
        failing_since: is.failing_since ?? now,
      });
    }
    if (c.failures > 0 && failedTooLong(is.failing_since, now, policy.disableAfterFailingMs)) {
      turns.failedTooLong.push(c.webhook_id);
    }
  }
  return turns;
}

/** Whether a webhook failing since `since` has failed for long enough to be disabled (`afterMs` null: never). */
export const failedTooLong = (since: number | null, now: number, afterMs: number | null): boolean =>
  afterMs !== null && since !== null && now - since >= afterMs;
