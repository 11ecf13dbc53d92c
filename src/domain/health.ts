/**
 * A webhook's health as its outcomes make it: the last delivery and the last failure, the failures in a row, and
 * per hour the attempts (in the hour they started), the failed attempts followed by another (counted when that
 * other comes), and the deliveries that ended delivered or failed (in the hour their last attempt ended; a failed
 * delivery redelivered has not ended after all, so its failure is taken back when its next attempt comes); the
 * view sums the last 24. Pure: the outcome writer hands each batch here with each delivery's attempt before, and
 * the store adds what comes back to what it holds. The hours count as webhook-stats.ts counts the log, so the
 * health line and the charts agree.
 */
import type { AttemptOutcome } from './types.ts';

/** What an attempt's decision made of its delivery: delivered, failed for good, or to be tried again. */
export type AttemptEnd = 'delivered' | 'failed' | 'retry';

/** A delivery's attempt before the one being recorded: when it ran, and whether its decision ended the delivery. */
export interface PreviousAttempt {
  started_at: number;
  duration_ms: number;
  /** No next attempt was scheduled: it failed the delivery, which a redelivery has now taken up again. */
  ended: boolean;
}

export const HOUR_MS = 3_600_000;

export interface WebhookHealth {
  last_delivered_at: number | null;
  last_failed_at: number | null;
  consecutive_failures: number;
  attempts_24h: number;
  /** Deliveries that ended delivered in those hours. */
  delivered_24h: number;
  /** Deliveries that ended failed in those hours. */
  failed_24h: number;
  /** Failed attempts of those hours that were followed by another. */
  retried_24h: number;
}

/** A delivery's latest logged attempt as the health reads it (null: the delivery's first attempt is coming). */
export const previousAttempt = (
  row: { started_at: number; duration_ms: number; next_attempt_at: number | null } | undefined,
): PreviousAttempt | null =>
  row
    ? {
        started_at: Number(row.started_at),
        duration_ms: Number(row.duration_ms),
        ended: row.next_attempt_at === null,
      }
    : null;

/** One hour's counts, as webhook_hours keeps them. */
export interface HealthHour {
  hour: number;
  attempts: number;
  delivered: number;
  failed: number;
  retried: number;
}

/** One batch's change to a webhook: per hour, and to its running figures. */
export interface HealthChange {
  webhook_id: string;
  hours: HealthHour[];
  /** Set when the batch has a delivery: the failures in a row then start over from `failures`. */
  last_delivered_at: number | null;
  last_failed_at: number | null;
  /** Failures in the batch after its last delivery (all of them, without one). */
  failures: number;
  /** When the first of those failed: the streak they begin or continue. */
  failing_since: number | null;
  /** Failures in the batch before its first delivery: with those before the batch, the streak that delivery ends. */
  leading_failures: number;
}

export function healthChanges(
  attempts: readonly {
    webhook_id: string;
    outcome: AttemptOutcome;
    end: AttemptEnd;
    previous?: PreviousAttempt | null;
  }[],
): HealthChange[] {
  const byWebhook = new Map<string, HealthChange>();
  const ordered = [...attempts].sort((a, b) => endOf(a.outcome) - endOf(b.outcome));
  for (const { webhook_id, outcome, end, previous } of ordered) {
    let c = byWebhook.get(webhook_id);
    if (!c) {
      c = {
        webhook_id,
        hours: [],
        last_delivered_at: null,
        last_failed_at: null,
        failures: 0,
        failing_since: null,
        leading_failures: 0,
      };
      byWebhook.set(webhook_id, c);
    }
    const at = endOf(outcome);
    hourOf(c.hours, outcome.started_at).attempts++;
    if (end !== 'retry') hourOf(c.hours, at)[end]++;
    // The attempt before was a failure (a delivered delivery is never attempted again), now followed by this one.
    if (previous) {
      hourOf(c.hours, previous.started_at).retried++;
      if (previous.ended) hourOf(c.hours, previous.started_at + previous.duration_ms).failed--;
    }
    if (end === 'delivered') {
      if (c.last_delivered_at === null) c.leading_failures = c.failures;
      c.last_delivered_at = at;
      c.failures = 0;
      c.failing_since = null;
    } else {
      c.last_failed_at = at;
      c.failures++;
      c.failing_since ??= at;
    }
  }
  return [...byWebhook.values()];
}

/** The first hour the 24-hour figures count, at `now`: the current hour and the 23 before it. */
export const firstCountedHour = (now: number): number => hourStart(now) - 23 * HOUR_MS;

/** The UTC hour `at` falls in. */
export const hourStart = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

function hourOf(hours: HealthHour[], at: number): HealthHour {
  const hour = hourStart(at);
  let bucket = hours.find((h) => h.hour === hour);
  if (!bucket) {
    bucket = { hour, attempts: 0, delivered: 0, failed: 0, retried: 0 };
    hours.push(bucket);
  }
  return bucket;
}

const endOf = (o: AttemptOutcome) => o.started_at + o.duration_ms;
