/**
 * The latest moment, counted from ingest, at which a delivery's last scheduled attempt can still end: every one
 * of its attempts times out, and every wait between them is as long as it can be — a 429 may stretch a wait to
 * MAX_RETRY_AFTER_S, never beyond (and a shorter Retry-After does not shorten the schedule's own wait in the
 * worst case). A media link must outlive this, so that the last attempt still carries a live link.
 */
export interface HorizonRules {
  /** Seconds between attempts (RETRY_SCHEDULE); its length + 1 attempts in all. */
  schedule: readonly number[];
  maxRetryAfterS: number;
  deliveryTimeoutMs: number;
}

export function retryHorizonMs(r: HorizonRules): number {
  const waits = r.schedule.reduce((sum, s) => sum + Math.max(s, r.maxRetryAfterS), 0) * 1000;
  return waits + (r.schedule.length + 1) * r.deliveryTimeoutMs;
}
