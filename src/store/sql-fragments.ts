/**
 * Store rules that both SQL dialects write alike, written once: each a fragment of an UPDATE's (or upsert's) SET list
 * that the SQLite and PostgreSQL adapters complete with their own WHERE, parameters and lease bookkeeping.
 */

import { OPERATOR_WEBHOOK_ID } from '../domain/operational-events.ts';

/**
 * The operator's deliveries are in their instance's log for the admin alone: this condition keeps them out for
 * anyone else (`d` is the deliveries table's alias with its dot, or '').
 */
export const NOT_OPERATOR = (d = ''): string => `${d}webhook_id <> '${OPERATOR_WEBHOOK_ID}'`;

/** Whether the delivery (a row of `d`) waits for its event's media to be downloaded (media-jobs/). */
export const waitsForMedia = (d: string): string =>
  `EXISTS (SELECT 1 FROM media_jobs j WHERE j.event_id = ${d}.event_id)`;

/** Disabling a webhook: its pending deliveries end as failed, for the reason that they cannot be sent any more. */
export const ENDED_BY_DISABLE = `status = 'failed', failure_reason = 'webhook_disabled', next_attempt_at = NULL`;

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
 * A manual redelivery: a fresh cycle of attempts, the first at `due` (the dialect's placeholder for now) and marked
 * manual; one whose event still waits for its media waits with it. One in a chat's queue goes to its back, at
 * `place` (a fresh number of the deliveries' sequence), and waits: the adapter then promotes the chat's head.
 */
export const redeliveryReset = (due: string, place: string): string =>
  `status = 'pending', cycle_attempts = 0, next_trigger = 'manual', failure_reason = NULL,
  queue_seq = CASE WHEN ${IN_CHAT_QUEUE} THEN ${place} ELSE queue_seq END,
  next_attempt_at = CASE WHEN ${waitsForMedia('deliveries')}
    OR (${IN_CHAT_QUEUE}) THEN NULL ELSE ${due} END`;

/**
 * Ordered delivery per chat (a webhook with ordering "chat"): a chat's queue is its pending deliveries to the webhook,
 * in their place, and only its head is ever due; the others wait with no due time, so that no claim passes over
 * them. A delivery's place is its seq, unless a redelivery moved it behind those waiting (queue_seq): the
 * deliveries_chat_queue index is on (webhook_id, chat, COALESCE(queue_seq, seq)) of the pending ones.
 *
 * CHAT_HEAD is a chat's head, its `key` column: one step of that index. `w`, `c`: the dialect's placeholders,
 * or the columns of an outer row (the head's own table is `h`). The key must be one the dialect finds a row by
 * (SQLite's seq is the rowid; PostgreSQL's is not indexed alone).
 */
export const CHAT_HEAD = (w: string, c: string, key: 'seq' | 'delivery_id' = 'seq'): string =>
  `SELECT h.${key} FROM deliveries h WHERE h.webhook_id = ${w} AND h.chat = ${c} AND h.status = 'pending'
   ORDER BY COALESCE(h.queue_seq, h.seq) LIMIT 1`;

/**
 * Makes a chat's head due at `now`, unless it already has a due time (in flight, or waiting for its retry) or waits
 * for its event's media (which makes it due once settled). Safe to run whenever a chat's queue may have moved.
 */
export const PROMOTE_HEAD = (now: string, w: string, c: string): string =>
  `UPDATE deliveries SET next_attempt_at = ${now}
   WHERE seq = (${CHAT_HEAD(w, c)}) AND next_attempt_at IS NULL
     AND NOT ${waitsForMedia('deliveries')}`;

/**
 * Whether a delivery (a row of `d`) waits in its chat's queue: pending with no due time, its webhook ordered by
 * chat. A head waiting for its media does too: its head is itself, which toDelivery drops.
 */
export const waitsInChatQueue = (d: string): string =>
  `${d}.status = 'pending' AND ${d}.next_attempt_at IS NULL AND ${inChatQueue(d)}`;

/**
 * The delivery a waiting one (a row of `d`) waits for: its chat's head, as a column of SQLite's log views (PostgreSQL
 * looks the page's heads up in one planned step, postgres/chat-queues.ts); null for any other.
 */
export const waitingFor = (d: string): string =>
  `CASE WHEN ${waitsInChatQueue(d)} THEN (${CHAT_HEAD(`${d}.webhook_id`, `${d}.chat`, 'delivery_id')}) END AS waiting_for`;

/** A webhook no longer ordered (`w`): every delivery waiting in a chat's queue is due at `now`. */
export const releaseWaiting = (
  now: string,
  w: string,
): string => `UPDATE deliveries SET next_attempt_at = ${now}
  WHERE webhook_id = ${w} AND status = 'pending' AND next_attempt_at IS NULL
    AND NOT ${waitsForMedia('deliveries')}`;

/** Whether the delivery (a row of `d`) is in a chat's queue: its webhook orders by chat. */
export const inChatQueue = (d = 'deliveries'): string => `${d}.chat IS NOT NULL AND EXISTS (
  SELECT 1 FROM webhooks w WHERE w.webhook_id = ${d}.webhook_id AND w.ordering = 'chat')`;
export const IN_CHAT_QUEUE = inChatQueue();

/**
 * A session.status marked (`at`, `id`) is newer than the one its instance shows (domain/session-status.ts,
 * isNewerStatus, in SQL): the condition of the UPDATE that sets the instance's status, so that of two transactions
 * at once the older one, whichever commits last, changes nothing (PostgreSQL checks the condition again on the row
 * the other committed). `binary` is the dialect's byte-order collation for the event_id, as JavaScript compares it.
 */
export const NEWER_STATUS = (at: string, id: string, binary = ''): string =>
  `(status_at IS NULL OR status_at < ${at} OR (status_at = ${at} AND status_event_id${binary} < ${id}))`;
