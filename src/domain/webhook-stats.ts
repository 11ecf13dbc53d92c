/**
 * A webhook's delivery health per UTC hour, from its attempt log: deliveries that ended delivered or failed (in the
 * hour their last attempt ended, when that attempt's decision ended them), failed attempts followed by another (in
 * the hour they started), and the answer time's p50 and p95 over the attempts that were answered (an HTTP status or
 * a broker's acknowledgement). Pure: the store reads the attempts of the window, this counts them. Counted as
 * health.ts counts outcomes as they are written, so the health line and the charts agree.
 */
import { type AttemptEnd, HOUR_MS, hourStart } from './health.ts';

/** The most hours one request may ask for: a week. */
export const MAX_STATS_HOURS = 168;
export const DEFAULT_STATS_HOURS = 24;

/** An attempt of the log, as the stats read it. */
export interface LoggedAttempt {
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  /** Its decision scheduled another attempt (the log's next_attempt_at). */
  retried: boolean;
  /** Its delivery's latest attempt: none followed it (yet). */
  last: boolean;
}

export interface StatsBucket {
  /** The hour's start, epoch ms. */
  start: number;
  delivered: number;
  failed: number;
  retried_attempts: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

/**
 * The first hour of `hours` ending with the present one. The store reads from an hour before it: an attempt that
 * started then may have ended, and with it its delivery, in the window.
 */
export const firstStatsHour = (now: number, hours: number): number => hourStart(now) - (hours - 1) * HOUR_MS;

/** How the attempt's decision ended it (retry-policy.ts): a 2xx or a broker's acknowledgement delivers. */
export function attemptEnd(a: LoggedAttempt): AttemptEnd {
  if (answered(a) && (a.status_code === null || (a.status_code >= 200 && a.status_code < 300)))
    return 'delivered';
  return a.retried ? 'retry' : 'failed';
}

/** An HTTP status, or a broker's acknowledgement (the log keeps neither a status nor an error for it). */
const answered = (a: LoggedAttempt): boolean => a.status_code !== null || a.error === null;

/** `hours` buckets, oldest first, the last the hour `now` is in. */
export function webhookStats(attempts: readonly LoggedAttempt[], hours: number, now: number): StatsBucket[] {
  const first = firstStatsHour(now, hours);
  const buckets = Array.from({ length: hours }, (_, i) => ({
    start: first + i * HOUR_MS,
    delivered: 0,
    failed: 0,
    retried_attempts: 0,
    durations: [] as number[],
  }));
  const at = (t: number) => {
    const i = Math.floor((t - first) / HOUR_MS);
    return i >= 0 && i < hours ? buckets[i] : undefined;
  };
  for (const a of attempts) {
    const started = at(a.started_at);
    const end = attemptEnd(a);
    // A failure another attempt followed (a retry, or a redelivery of a failed delivery, which had not ended then).
    if (end !== 'delivered' && !a.last) {
      if (started) started.retried_attempts++;
    } else if (end !== 'retry' && a.last) {
      const ended = at(a.started_at + a.duration_ms);
      if (ended) ended[end]++;
    }
    if (started && answered(a)) started.durations.push(a.duration_ms);
  }
  return buckets.map(({ durations, ...b }) => {
    durations.sort((x, y) => x - y);
    return { ...b, p50_ms: percentile(durations, 0.5), p95_ms: percentile(durations, 0.95) };
  });
}

/** The nearest-rank percentile: a duration some attempt really took; null without any. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}
