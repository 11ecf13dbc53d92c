import type { AttemptOutcome, FailureReason } from './types.ts';

/** What happens to a delivery after one attempt. */
export type Decision =
  | { kind: 'delivered' }
  | { kind: 'retry'; at: number; reason: 'schedule' | 'retry-after' }
  | { kind: 'failed'; reason: FailureReason; disableWebhook: boolean };

export interface RetryRules {
  /** Seconds to wait after attempts 1..n; its length + 1 is the attempt limit. */
  schedule: readonly number[];
  maxRetryAfterS: number;
}

/**
 * Pure decision from an attempt's outcome. `attempt` is the 1-based number of the attempt just made
 * within the current cycle; `now` is when it ended (the schedule counts from the end of the failed attempt).
 */
export function decide(outcome: AttemptOutcome, attempt: number, now: number, rules: RetryRules): Decision {
  const code = outcome.status_code;
  if (code !== null && code >= 200 && code < 300) return { kind: 'delivered' };
  // A broker's acknowledgement (a confirm, a stream's ack, an entry id), said so by the broker's provider.
  if (outcome.acknowledged === true) return { kind: 'delivered' };
  if (code === 410) return { kind: 'failed', reason: 'gone', disableWebhook: true };
  // Nothing was sent, and another try would be refused the same way until the URL or the settings change.
  if (outcome.error === 'destination_not_allowed') {
    return { kind: 'failed', reason: 'destination_not_allowed', disableWebhook: false };
  }
  if (attempt >= rules.schedule.length + 1) {
    return { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false };
  }
  if (code === 429) {
    const wait = retryAfterMs(outcome.retry_after, now);
    if (wait !== null)
      return { kind: 'retry', at: now + Math.min(wait, rules.maxRetryAfterS * 1000), reason: 'retry-after' };
  }
  return { kind: 'retry', at: now + rules.schedule[attempt - 1] * 1000, reason: 'schedule' };
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (!/[a-z]/i.test(value)) return null;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}
