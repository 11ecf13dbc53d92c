/**
 * Chats' queues on PostgreSQL (rules.ts, ordered delivery per chat), shared by any number of processes. Whoever
 * changes a chat's queue and then makes its head due (ingest, an outcome, a redelivery, media settled) holds the
 * chat's advisory lock meanwhile, taken in one global order: otherwise two transactions, each blind to the other's
 * uncommitted change (a delivery joining the queue, its head finishing), could both leave the queue with no head due.
 */
import { CHAT_HEAD, waitsForMedia } from '../rules.ts';
import type { Tx } from './database.ts';

/** First key of the advisory locks of chats' queues (the second is a hash of the webhook and the chat). */
const CHAT_LOCK = 0x48524351; // "HRCQ"

/**
 * Locks each chat's queue (sorted, once each) for the transaction, then makes each one's head due at its `now`.
 * Returns how many became due: the caller wakes the workers for them.
 */
export async function promoteHeads(
  sql: Tx,
  chats: readonly { webhook_id: string; chat: string; now: number }[],
): Promise<number> {
  const unique = new Map(chats.map((c) => [`${c.webhook_id} ${c.chat}`, c]));
  const list = [...unique.values()];
  await sql`
    WITH keys AS MATERIALIZED (
      SELECT DISTINCT hashtext(k) AS h FROM unnest(${list.map((c) => `${c.webhook_id} ${c.chat}`)}::text[]) AS k
      ORDER BY h
    )
    SELECT pg_advisory_xact_lock(${CHAT_LOCK}::integer, h)::text FROM keys`;
  // Each chat's head, one index step per chat (a LATERAL probe per chat: written as a correlated subquery in the
  // WHERE, the planner hashed every waiting delivery of the webhook), then the heads updated by their primary key
  // (seq has no index of its own: joined on it, the update scanned the whole table). Without statistics on a
  // fast-growing table the planner took deliveries_webhook_due and sorted the webhook's whole queue for each chat;
  // with sorting off, only deliveries_chat_queue (already in the head's order) is left to it.
  await sql`SET LOCAL enable_sort = off`;
  const promoted = await sql`
    UPDATE deliveries d SET next_attempt_at = h.now
    FROM (
      SELECT c.now, head.delivery_id FROM unnest(${list.map((c) => c.webhook_id)}::text[], ${list.map((c) => c.chat)}::text[],
                                         ${list.map((c) => c.now)}::bigint[]) AS c(webhook_id, chat, now)
      CROSS JOIN LATERAL (${sql.unsafe(CHAT_HEAD('c.webhook_id', 'c.chat', 'delivery_id'))}) head
    ) h
    WHERE d.delivery_id = h.delivery_id AND d.next_attempt_at IS NULL AND NOT ${sql.unsafe(waitsForMedia('d'))}`;
  await sql`SET LOCAL enable_sort TO DEFAULT`;
  return promoted.count;
}
