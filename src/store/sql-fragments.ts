/**
 * SQL fragments that both dialects write alike, written once: each a fragment of a statement (a condition, or an
 * UPDATE's or upsert's SET list) that the SQLite and PostgreSQL adapters complete with their own WHERE and
 * parameters. A delivery's state and its changes are queue/transitions.ts's.
 */

import { OPERATOR_WEBHOOK_ID } from '../domain/operational-events.ts';

/**
 * The operator's deliveries are in their instance's log for the admin alone: this condition keeps them out for
 * anyone else (`d` is the deliveries table's alias with its dot, or '').
 */
export const NOT_OPERATOR = (d = ''): string => `${d}webhook_id <> '${OPERATOR_WEBHOOK_ID}'`;

/**
 * An attempt's result becomes its delivery's last result when none later is recorded: a late one (its lease lost)
 * older than the last leaves it as it is. `latest` is the dialect's condition (isLatest, and more), `r` names the
 * result's started_at, status_code and error in the statement.
 */
export const lastResult = (latest: string, r: { started_at: string; status_code: string; error: string }) =>
  `last_attempt_at = CASE WHEN ${latest} THEN ${r.started_at} ELSE last_attempt_at END,
  last_status_code = CASE WHEN ${latest} THEN ${r.status_code} ELSE last_status_code END,
  last_error = CASE WHEN ${latest} THEN ${r.error} ELSE last_error END`;

/** A result started at `startedAt` is at least as recent as the delivery's last one. */
export const isLatest = (startedAt: string): string =>
  `(last_attempt_at IS NULL OR last_attempt_at <= ${startedAt})`;

/**
 * A webhook's failures in a row, in the upsert of one batch's health change (domain/health.ts): a batch with a
 * delivery starts them over from its own failures after it; one without adds its failures to them. The streak's
 * start and its announcement as failing (operational-events.ts) start over with them.
 */
export const FAILURES_IN_A_ROW = `consecutive_failures = excluded.consecutive_failures
  + CASE WHEN excluded.last_delivered_at IS NOT NULL THEN 0 ELSE webhook_health.consecutive_failures END,
  failing_since = CASE WHEN excluded.last_delivered_at IS NOT NULL THEN excluded.failing_since
    ELSE COALESCE(webhook_health.failing_since, excluded.failing_since) END,
  failing_announced_at = CASE WHEN excluded.last_delivered_at IS NOT NULL THEN NULL
    ELSE webhook_health.failing_announced_at END`;

/**
 * A session.status marked (`at`, `id`) is newer than the one its instance shows (domain/session-status.ts,
 * isNewerStatus, in SQL): the condition of the UPDATE that sets the instance's status, so that of two transactions
 * at once the older one, whichever commits last, changes nothing (PostgreSQL checks the condition again on the row
 * the other committed). `binary` is the dialect's byte-order collation for the event_id, as JavaScript compares it.
 */
export const NEWER_STATUS = (at: string, id: string, binary = ''): string =>
  `(status_at IS NULL OR status_at < ${at} OR (status_at = ${at} AND status_event_id${binary} < ${id}))`;
