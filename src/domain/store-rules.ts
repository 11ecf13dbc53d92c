/**
 * The rules every store applies, written once: what an attempt's decision changes, what a session.status event
 * does to its instance (which one is the newest: session-status.ts), who may be redelivered, what a repeated
 * event_id means, and how long a rotated-out secret still signs. Pure: the adapters only persist what these return.
 */
import type { PreviousAttempt } from './health.ts';
import type { Decision } from './retry-policy.ts';
import { isNewerStatus, type StatusMark } from './session-status.ts';
import type { AttemptOutcome, DeliveryStatus, EventDraft, FailureReason } from './types.ts';

/** An attempt as the delivery log keeps it, and what it changes on its delivery. */
export interface OutcomePlan {
  attempt: AttemptOutcome & { next_attempt_at: number | null; next_attempt_reason: string | null };
  delivery: {
    status: DeliveryStatus;
    next_attempt_at: number | null;
    failure_reason: FailureReason | null;
    last_attempt_at: number;
    last_status_code: number | null;
    last_error: string | null;
  };
}

export function planOutcome(outcome: AttemptOutcome, decision: Decision): OutcomePlan {
  const retryAt = decision.kind === 'retry' ? decision.at : null;
  return {
    attempt: {
      ...outcome,
      // PostgreSQL text cannot hold NUL; a receiver's answer may.
      response_body: outcome.response_body?.replaceAll('\0', '\uFFFD') ?? null,
      next_attempt_at: retryAt,
      next_attempt_reason: decision.kind === 'retry' ? decision.reason : null,
    },
    delivery: {
      status: decision.kind === 'retry' ? 'pending' : decision.kind,
      next_attempt_at: retryAt,
      failure_reason: decision.kind === 'failed' ? decision.reason : null,
      last_attempt_at: outcome.started_at,
      last_status_code: outcome.status_code,
      last_error: outcome.error,
    },
  };
}

/**
 * A webhook's rotated-out signing secret while its grace lasts (until strictly after `now`), signed with beside the
 * current one; null once the grace has ended, or when there is none. (Stores forget ended ones in SQL, in bulk:
 * forgetRotatedSecrets.)
 */
export const secretInGrace = (
  w: { previous_secret_sealed?: string | null; previous_secret_until?: number | null },
  now: number,
): string | null =>
  w.previous_secret_until != null && w.previous_secret_until > now
    ? (w.previous_secret_sealed ?? null)
    : null;

/** An attempt as the webhook's health counts it: what its decision made of its delivery, and the attempt before. */
export const healthInput = (
  r: { claim: { webhook_id: string }; outcome: AttemptOutcome; decision: Decision },
  previous: PreviousAttempt | null = null,
) => ({
  webhook_id: r.claim.webhook_id,
  outcome: r.outcome,
  end: r.decision.kind,
  previous,
});

/** Whether the decision disables the webhook (it answered 410). */
export const disablesWebhook = (d: Decision): boolean => d.kind === 'failed' && d.disableWebhook;

/** What a session.status does to its instance: the status and phone it shows, and the event they came from. */
export interface SessionChange extends StatusMark {
  status: string;
  phone: string | null;
}

/**
 * What the newly stored events say of their instance's session: the newest session.status among them by its
 * timestamp (isNewerStatus), or null when none is one. The store writes it only over an older one (store/sql-fragments.ts,
 * NEWER_STATUS), whatever order the posts commit in.
 * Status and phone go together, as the event carried them: a newer status without a phone (the session logged out
 * and shows a QR code again, or stopped, or the engine did not say) leaves no phone, since an older event's number
 * beside it would claim a link that event no longer vouches for; an older event never brings its phone back.
 */
export function sessionChange(fresh: readonly EventDraft[]): SessionChange | null {
  let newest: SessionChange | null = null;
  for (const e of fresh) {
    if (e.event !== 'session.status') continue;
    const mark = { at: e.status_at ?? e.timestamp, event_id: e.order_id ?? e.event_id };
    if (newest && !isNewerStatus(mark, newest)) continue;
    const phone = e.payload.phone;
    newest = { status: e.payload.status as string, phone: typeof phone === 'string' ? phone : null, ...mark };
  }
  return newest;
}

/** Why a failed delivery of a disabled webhook cannot be redelivered, said alike for one and for many. */
export const webhookDisabledConflict = (webhookId: string): string =>
  `webhook ${webhookId} is disabled; enable it before redelivering`;

/** Why a delivery cannot be redelivered, or null when it can: only failed ones, of an enabled webhook. */
export function redeliveryConflict(
  d: { status: string; webhook_id: string },
  webhookEnabled: boolean,
): string | null {
  if (d.status !== 'failed') return `delivery is ${d.status}; only failed deliveries can be redelivered`;
  return webhookEnabled ? null : webhookDisabledConflict(d.webhook_id);
}

/**
 * An event_id stored before: the same instance gets the first answer again (nothing queued twice); another
 * instance's reuse is refused, with this message, and the whole call stores nothing.
 */
export function repeatConflict(eventId: string, storedFor: string, instanceId: string): string | null {
  return storedFor === instanceId ? null : `event_id ${eventId} was already published to another instance`;
}
