/**
 * Store rules that both SQL dialects write alike, written once: each a fragment of an UPDATE's SET list that the
 * SQLite and PostgreSQL adapters complete with their own WHERE, parameters and lease bookkeeping.
 */

/** Disabling a webhook: its pending deliveries end as failed, for the reason that they cannot be sent any more. */
export const ENDED_BY_DISABLE = `status = 'failed', failure_reason = 'webhook_disabled', next_attempt_at = NULL`;

/**
 * A manual redelivery: a fresh cycle of attempts, the first at `due` (the dialect's placeholder for now) and marked
 * manual; one whose event still waits for its media waits with it.
 */
export const redeliveryReset = (due: string): string =>
  `status = 'pending', cycle_attempts = 0, next_trigger = 'manual', failure_reason = NULL,
  next_attempt_at = CASE WHEN EXISTS (SELECT 1 FROM media_jobs j WHERE j.event_id = deliveries.event_id) THEN NULL
    ELSE ${due} END`;
