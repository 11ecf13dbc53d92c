/**
 * Chats' queues on PostgreSQL (ordered delivery per chat, transitions.ts): their heads found and made due, for the
 * queue (postgres.ts), and looked up for the delivery log's waiting rows.
 *
 * Whoever changes a chat's queue and then makes its head due (ingest, an outcome, a redelivery, media settled) holds
 * the chat's advisory lock meanwhile, taken in one global order: otherwise two transactions, each blind to the
 * other's uncommitted change (a delivery joining the queue, its head finishing), could both leave the queue with no
 * head due.
 *
 * A chat's head is one step of deliveries_chat_queue, by a LATERAL probe per chat (written as a correlated subquery,
 * the planner hashed every waiting delivery of the webhook), planned with sorting off: without statistics on a
 * fast-growing table the planner took deliveries_webhook_due instead and sorted the webhook's whole queue for each
 * chat, and with sorting off only the chat's index, already in the queue's order, is left to it (BENCHMARKS.md).
 * A head is then found by its primary key: seq has no index of its own.
 */
import type { Row } from 'postgres';
import type { Tx } from '../postgres/database.ts';
import { CHAT_HEAD, PROMOTABLE, waitsInChatQueue } from './transitions.ts';

/** First key of the advisory locks of chats' queues (the second is a hash of the webhook and the chat). */
const CHAT_LOCK = 0x48524351; // "HRCQ"

export interface Chat {
  webhook_id: string;
  chat: string;
  /** When its head becomes due, for a promotion. */
  now?: number;
}

/** `statement` planned with sorting off, the setting put back for the transaction's statements after it. */
async function withoutSorting<T>(sql: Tx, statement: () => Promise<T>): Promise<T> {
  await sql`SET LOCAL enable_sort = off`;
  const result = await statement();
  await sql`SET LOCAL enable_sort TO DEFAULT`;
  return result;
}

/** The head of each chat queue among `chats` (webhook_id, chat, now, delivery_id), as rows of a FROM. */
const heads = (sql: Tx, chats: readonly Chat[]) => sql`
  SELECT c.webhook_id, c.chat, c.now, head.delivery_id
  FROM unnest(${chats.map((c) => c.webhook_id)}::text[], ${chats.map((c) => c.chat)}::text[],
              ${chats.map((c) => c.now ?? null)}::bigint[]) AS c(webhook_id, chat, now)
  CROSS JOIN LATERAL (${sql.unsafe(CHAT_HEAD('c.webhook_id', 'c.chat', 'delivery_id'))}) head`;

/** The log's column telling whether a row (of `d`) waits in its chat's queue, read by withWaitingFor. */
export const WAITS = (d: string): string => `(${waitsInChatQueue(d)}) AS waits`;

/**
 * Sets each log row's waiting_for: the head of its chat's queue for the rows that wait in one (their WAITS column),
 * else null (rows.ts drops a head's own id). One lookup for the page, in the caller's transaction (one snapshot).
 */
export async function withWaitingFor(sql: Tx, rows: Row[]): Promise<Row[]> {
  const waiting = rows.filter((r) => r.waits) as unknown as Chat[];
  const found =
    waiting.length === 0 ? [] : await withoutSorting(sql, () => sql<Row[]>`${heads(sql, waiting)}`);
  const head = new Map(found.map((h) => [`${h.webhook_id} ${h.chat}`, h.delivery_id as string]));
  for (const r of rows) r.waiting_for = r.waits ? (head.get(`${r.webhook_id} ${r.chat}`) ?? null) : null;
  return rows;
}

/**
 * Locks each chat's queue (sorted, once each) for the transaction, then makes each one's head due at its `now`
 * where it may be (PROMOTABLE). Returns how many became due.
 */
export async function promoteHeads(sql: Tx, chats: readonly Required<Chat>[]): Promise<number> {
  const list = [...new Map(chats.map((c) => [`${c.webhook_id} ${c.chat}`, c])).values()];
  await sql`
    WITH keys AS MATERIALIZED (
      SELECT DISTINCT hashtext(k) AS h FROM unnest(${list.map((c) => `${c.webhook_id} ${c.chat}`)}::text[]) AS k
      ORDER BY h
    )
    SELECT pg_advisory_xact_lock(${CHAT_LOCK}::integer, h)::text FROM keys`;
  const promoted = await withoutSorting(
    sql,
    () => sql`
      UPDATE deliveries d SET next_attempt_at = h.now
      FROM (${heads(sql, list)}) h
      WHERE d.delivery_id = h.delivery_id AND ${sql.unsafe(PROMOTABLE('d'))}`,
  );
  return promoted.count;
}
