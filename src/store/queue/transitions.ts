/**
 * The life of a delivery, written once for both dialects: the states a delivery row can be in and the write each
 * transition makes, as fragments of SQL that the dialects (sqlite.ts, postgres.ts beside this) complete with their
 * own WHERE, parameters and lease bookkeeping. Only the queue changes a delivery's `status`, `next_attempt_at` and
 * `lease_token`, apart from the claim's lease (claim/).
 *
 * | state               | status    | next_attempt_at  | also                                            |
 * | ------------------- | --------- | ---------------- | ----------------------------------------------- |
 * | held for media      | pending   | NULL             | its event has a media job (waitsForMedia)       |
 * | waiting in its chat | pending   | NULL             | webhook ordered by chat, not its chat's head    |
 * | due                 | pending   | <= now           | no lease                                        |
 * | leased              | pending   | the lease's end  | lease_token (PostgreSQL), in memory (SQLite)    |
 * | waiting to retry    | pending   | > now            | no lease                                        |
 * | delivered           | delivered | NULL             |                                                 |
 * | failed              | failed    | NULL             | failure_reason                                  |
 *
 * | operation       | from → to                                                  | write                          |
 * | --------------- | ---------------------------------------------------------- | ------------------------------ |
 * | enqueue         | new → held, waiting in its chat, due, leased (handed off)  | dueAtEnqueue                   |
 * | release held    | held → due (or waiting in its chat)                        | RELEASE_HELD, then advance     |
 * | advance chats   | waiting in its chat (its head) → due                       | CHAT_HEAD, PROMOTABLE          |
 * | claim           | due → leased                                               | (claim/)                       |
 * | finish          | leased → delivered, failed, waiting to retry               | FINISHED, then advance         |
 * | requeue claims  | leased → due (given back unstarted)                        | RELEASE_CLAIM                  |
 * | requeue         | delivered, failed → due, held or waiting (redelivery)      | redeliveryReset, then advance  |
 * | end for webhook | any pending → failed (webhook_disabled)                    | ENDED_BY_DISABLE               |
 * | unorder         | waiting in its chat → due (ordering set to none)           | RELEASE_WAITING                |
 *
 * Held and waiting are the states with no due time: no claim ever passes over them, and only release held, advance
 * and unorder make them due.
 */

/** Whether the delivery (a row of `d`) waits for its event's media to be downloaded (media-jobs/). */
export const waitsForMedia = (d: string): string =>
  `EXISTS (SELECT 1 FROM media_jobs j WHERE j.event_id = ${d}.event_id)`;

/**
 * A new delivery's due time: none while it waits for its event's media or in its chat's queue (advance makes its
 * chat's head due); when handed off at ingest, the end of that lease (as a claim leaves it); else now.
 */
export function dueAtEnqueue(
  d: { held: boolean; ordered: boolean; leaseMs?: number | null },
  now: number,
): number | null {
  if (d.held || d.ordered) return null;
  return d.leaseMs == null ? now : now + d.leaseMs;
}

/** Disabling a webhook: its pending deliveries end as failed, for the reason that they cannot be sent any more. */
export const ENDED_BY_DISABLE = `status = 'failed', failure_reason = 'webhook_disabled', next_attempt_at = NULL`;

/** An attempt's decision applied (finish): `status`, `next_attempt_at`, `failure_reason` the dialect's values. */
export const FINISHED = (status: string, due: string, reason: string): string =>
  `status = ${status}, next_attempt_at = ${due}, failure_reason = ${reason}`;

/** A claim given back unstarted: due again at `now`, if still pending. */
export const RELEASE_CLAIM = (now: string): string => `next_attempt_at = ${now}`;

/**
 * A manual redelivery: a fresh cycle of attempts, the first at `due` (the dialect's placeholder for now) and marked
 * manual; one whose event still waits for its media waits with it. One in a chat's queue goes to its back, at
 * `place` (a fresh number of the deliveries' sequence), and waits: the queue then advances its chat.
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
 * Whether a chat's head (a row of `d`) may be made due now: not when it already has a due time (in flight, or
 * waiting for its retry) or waits for its event's media (which makes it due once settled). Safe to apply whenever a
 * chat's queue may have moved.
 */
export const PROMOTABLE = (d: string): string => `${d}.next_attempt_at IS NULL AND NOT ${waitsForMedia(d)}`;

/**
 * Whether a delivery (a row of `d`) waits in its chat's queue: pending with no due time, its webhook ordered by
 * chat. A head waiting for its media does too: its head is itself, which toDelivery drops.
 */
export const waitsInChatQueue = (d: string): string =>
  `${d}.status = 'pending' AND ${d}.next_attempt_at IS NULL AND ${inChatQueue(d)}`;

/**
 * The delivery a waiting one (a row of `d`) waits for: its chat's head, as a column of SQLite's log views (PostgreSQL
 * looks the page's heads up in one planned step, postgres-chats.ts); null for any other.
 */
export const waitingFor = (d: string): string =>
  `CASE WHEN ${waitsInChatQueue(d)} THEN (${CHAT_HEAD(`${d}.webhook_id`, `${d}.chat`, 'delivery_id')}) END AS waiting_for`;

/** A webhook no longer ordered (`w`): every delivery waiting in a chat's queue is due at `now`. */
export const RELEASE_WAITING = (
  now: string,
  w: string,
): string => `UPDATE deliveries SET next_attempt_at = ${now}
  WHERE webhook_id = ${w} AND status = 'pending' AND next_attempt_at IS NULL
    AND NOT ${waitsForMedia('deliveries')}`;

/**
 * Media settled for event `e`: its held deliveries are due at `now`, but one in a chat's queue only as its chat's
 * head (the caller advances those chats once the job is gone).
 */
export const RELEASE_HELD = (
  now: string,
  e: string,
): string => `UPDATE deliveries SET next_attempt_at = ${now}
  WHERE event_id = ${e} AND status = 'pending' AND next_attempt_at IS NULL AND NOT (${IN_CHAT_QUEUE})`;

/** Whether the delivery (a row of `d`) is in a chat's queue: its webhook orders by chat. */
export const inChatQueue = (d = 'deliveries'): string => `${d}.chat IS NOT NULL AND EXISTS (
  SELECT 1 FROM webhooks w WHERE w.webhook_id = ${d}.webhook_id AND w.ordering = 'chat')`;
export const IN_CHAT_QUEUE = inChatQueue();
