/**
 * The life of a delivery on PostgreSQL (transitions.ts), shared by any number of processes: every change of a
 * delivery's state is made here, inside the caller's transaction, with what follows from it: a chat whose queue
 * moved gets its head made due, and the workers are woken (pg_notify, sent at commit) for what became due. Chats' heads are found and made due by postgres-chats.ts.
 */
import type postgres from 'postgres';
import type { Row } from 'postgres';
import { chatKey } from '../../domain/chat-key.ts';
import { newId } from '../../domain/ids.ts';
import {
  type Announcement,
  announcementTargets,
  disableReason,
  OPERATOR_WEBHOOK_ID,
  webhookDisabled,
} from '../../domain/operational-events.ts';
import type { EventDraft, Webhook } from '../../domain/types.ts';
import type { PostgresDatabase, Tx } from '../postgres/database.ts';
import { toWebhook } from '../rows.ts';
import { isLatest, lastResult } from '../sql-fragments.ts';
import { type Chat, promoteHeads } from './postgres-chats.ts';
import {
  dueAtEnqueue,
  ENDED_BY_DISABLE,
  FINISHED,
  IN_CHAT_QUEUE,
  inChatQueue,
  RELEASE_CLAIM,
  RELEASE_HELD,
  RELEASE_WAITING,
  redeliveryReset,
} from './transitions.ts';

/** A delivery to write: its row's columns, and what it waits for. */
export interface NewDelivery {
  /** Its event (written). */
  e: Pick<EventDraft, 'event_id' | 'instance_id' | 'event'>;
  delivery_id: string;
  webhook_id: string;
  chat: string;
  now: number;
  /** Its event's media is still to be downloaded (the caller wrote the media job before). */
  held: boolean;
  /** Its webhook orders by chat: it joins the chat's queue. */
  ordered: boolean;
  /** Handed off at ingest: written leased (this token), due when the lease runs out, as a claim leaves it. */
  lease: string | null;
  leaseMs: number;
}

/** An attempt's result and decision, as one row of finish's statement (RECORD_COLUMNS). */
export interface FinishRow {
  delivery_id: string;
  lease_token: string;
  attempt: number;
  trigger: string;
  started_at: number;
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
  next_attempt_at: number | null;
  next_attempt_reason: string | null;
  status: string;
  failure_reason: string | null;
}

export class PostgresQueue {
  readonly db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.db = db;
  }

  /** New pending deliveries, in their order; an ordered one joins its chat's queue, which then advances. */
  async enqueue(sql: Tx, rows: readonly NewDelivery[]): Promise<void> {
    if (rows.length === 0) return;
    const due = rows.map((r) => dueAtEnqueue({ ...r, leaseMs: r.lease ? r.leaseMs : null }, r.now));
    await sql`
      INSERT INTO deliveries (delivery_id, event_id, instance_id, webhook_id, event, status, created_at,
        next_attempt_at, lease_token, chat)
      SELECT d.delivery_id, d.event_id, d.instance_id, d.webhook_id, d.event, 'pending', d.created_at, d.due, d.lease,
        d.chat
      FROM unnest(${rows.map((r) => r.delivery_id)}::text[], ${rows.map((r) => r.e.event_id)}::text[],
                  ${rows.map((r) => r.e.instance_id)}::text[], ${rows.map((r) => r.webhook_id)}::text[],
                  ${rows.map((r) => r.e.event)}::text[], ${rows.map((r) => r.now)}::bigint[],
                  ${due}::bigint[], ${rows.map((r) => r.lease)}::text[],
                  ${rows.map((r) => r.chat)}::text[])
                  WITH ORDINALITY AS d(delivery_id, event_id, instance_id, webhook_id, event, created_at, due, lease,
                    chat, n)
      ORDER BY d.n`;
    // Due and not taken, or held (the media jobs have work): someone must be woken.
    if (rows.some((r) => r.held || (!r.ordered && r.lease === null))) await this.#wake(sql);
    await this.advanceChats(
      sql,
      rows.filter((r) => r.ordered),
    );
  }

  /** Makes each chat's head due at its `now` where it may be; returns how many became due. */
  async advanceChats(sql: Tx, chats: readonly Required<Chat>[]): Promise<number> {
    if (chats.length === 0) return 0;
    const promoted = await promoteHeads(sql, chats);
    if (promoted > 0) await this.#wake(sql);
    return promoted;
  }

  /** The event's media settled: its job gone, its held deliveries due (in a chat's queue, as its head). */
  async releaseHeld(sql: Tx, eventId: string, now: number): Promise<void> {
    const released = await sql.unsafe(RELEASE_HELD('$1::bigint', '$2'), [now, eventId]);
    await sql`DELETE FROM media_jobs WHERE event_id = ${eventId}`;
    const queued = await sql<{ webhook_id: string; chat: string }[]>`
      SELECT webhook_id, chat FROM deliveries
      WHERE event_id = ${eventId} AND status = 'pending' AND ${sql.unsafe(IN_CHAT_QUEUE)}`;
    if (released.count > 0) await this.#wake(sql);
    await this.advanceChats(
      sql,
      queued.map((q) => ({ ...q, now })),
    );
  }

  /**
   * Attempts' results on their deliveries, in one statement that applies and logs. `= ANY(ids)` lets the planner use
   * the key's index instead of reading the whole table to join it with the records. Attempts are logged on the
   * deliveries the UPDATE returns, which it holds locked until commit: a delivery deleted mid-attempt (its webhook or
   * instance removed) leaves nothing to log the attempt on, and one being deleted now is deleted with its attempts
   * after this commits (the schema has no foreign key to do either; migrations.ts). A result whose lease is gone
   * (ended by a disable, or run out and taken by another worker) still counts as an attempt made, and is the last
   * result if it is the latest, but decides nothing. The row is matched by its key alone and the lease compared in
   * SET: a disable committed while this waits for the row is then seen (the expressions are re-read on the new row).
   * Finished deliveries in a chat's queue then let the next one go (a late result's is a harmless no-op).
   */
  async finish(sql: Tx, rows: FinishRow[], now: number): Promise<void> {
    const json = this.db.sql.json(rows as unknown as postgres.JSONValue);
    const ids = rows.map((r) => r.delivery_id);
    const finished = await sql<{ webhook_id: string; chat: string }[]>`
      WITH r AS (
        SELECT * FROM jsonb_to_recordset(${json}) AS r(${sql.unsafe(RECORD_COLUMNS)})
      ), applied AS (
        UPDATE deliveries d SET attempts = d.attempts + 1,
          cycle_attempts = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN d.cycle_attempts + 1 ELSE d.cycle_attempts END,
          next_trigger = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN 'scheduled' ELSE d.next_trigger END,
          ${sql.unsafe(LAST_RESULT)},
          ${sql.unsafe(FINISHED(held('r.status', 'd.status'), held('r.next_attempt_at', 'd.next_attempt_at'), held('r.failure_reason', 'd.failure_reason')))},
          lease_token = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN NULL ELSE d.lease_token END
        FROM r
        WHERE d.delivery_id = ANY(${ids}::text[]) AND d.delivery_id = r.delivery_id
        RETURNING d.delivery_id, d.webhook_id, d.chat, d.status
      ), logged AS (
        INSERT INTO attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error,
          response_body, next_attempt_at, next_attempt_reason)
        SELECT r.delivery_id, r.attempt, r.trigger, r.started_at, r.duration_ms, r.status_code, r.error,
          r.response_body, r.next_attempt_at, r.next_attempt_reason
        FROM r JOIN applied a ON a.delivery_id = r.delivery_id
      )
      SELECT a.webhook_id, a.chat FROM applied a WHERE a.status <> 'pending' AND ${sql.unsafe(inChatQueue('a'))}`;
    // The next of each chat is due now: the workers are woken for it, as no claim or retry would wake them.
    await this.advanceChats(
      sql,
      finished.map((f) => ({ ...f, now })),
    );
  }

  /** Claims given back unstarted: only a delivery still held by that very lease, due again now. Returns how many. */
  async requeueClaims(sql: Tx, claims: { delivery_id: string; lease_token: string }[], now: number) {
    const ids = claims.map((c) => c.delivery_id);
    const result = await sql`
      UPDATE deliveries d SET ${sql.unsafe(RELEASE_CLAIM('c.now'))}, lease_token = NULL
      FROM (SELECT *, ${now}::bigint AS now
            FROM unnest(${ids}::text[], ${claims.map((c) => c.lease_token)}::text[]) AS c(delivery_id, lease_token)) c
      WHERE d.delivery_id = ANY(${ids}::text[]) AND d.delivery_id = c.delivery_id
        AND d.lease_token = c.lease_token AND d.status = 'pending'`;
    if (result.count > 0) await this.#wake(sql);
    return result.count;
  }

  /**
   * Redelivered (pending again), the deliveries `where` picks ($1 is now, its parameters from $2), their leases gone:
   * those in a chat's queue go to its back, at places taken from the deliveries' own sequence in seq order (so that
   * no later delivery shares one), and their chats then advance. Returns how many.
   */
  async requeue(sql: Tx, where: string, params: (string | number | null)[], now: number): Promise<number> {
    const restarted = await sql.unsafe<{ webhook_id: string; chat: string; queued: boolean }[]>(
      `WITH picked AS (
         SELECT delivery_id, nextval(pg_get_serial_sequence('deliveries', 'seq')) AS place
         FROM (SELECT delivery_id FROM deliveries WHERE ${where} ORDER BY seq FOR UPDATE) s
       )
       UPDATE deliveries SET ${redeliveryReset('$1::bigint', 'picked.place')}, lease_token = NULL
       FROM picked WHERE deliveries.delivery_id = picked.delivery_id
       RETURNING deliveries.webhook_id, deliveries.chat, (${IN_CHAT_QUEUE}) AS queued`,
      [now, ...params],
    );
    await this.advanceChats(
      sql,
      restarted.filter((r) => r.queued).map((r) => ({ webhook_id: r.webhook_id, chat: r.chat, now })),
    );
    if (restarted.length > 0) await this.#wake(sql);
    return restarted.length;
  }

  /**
   * Disabling a webhook ends its pending deliveries as failed; clearing the lease leaves in-flight results nothing
   * to decide (finish). Only the disable that finds the webhook enabled announces it.
   */
  async endForWebhook(sql: Tx, webhookId: string, reason: string, now: number): Promise<void> {
    const disabled = await sql`
      UPDATE webhooks SET enabled = false, disabled_reason = ${reason}, disabled_at = ${now}::bigint,
        updated_at = ${now}::bigint
      WHERE webhook_id = ${webhookId} AND enabled`;
    if (disabled.count > 0) {
      await this.announce(sql, webhookId, (w) => webhookDisabled(w, disableReason(reason), now), now);
    }
    await sql`
      UPDATE deliveries SET ${sql.unsafe(ENDED_BY_DISABLE)}, lease_token = NULL
      WHERE webhook_id = ${webhookId} AND status = 'pending'`;
  }

  /** A webhook no longer ordered by chat: whatever waited in its chats' queues is due. */
  async unorder(sql: Tx, webhookId: string, now: number): Promise<void> {
    await sql.unsafe(RELEASE_WAITING('$1::bigint', '$2'), [now, webhookId]);
  }

  /**
   * An operational event (domain/operational-events.ts) of what `make` says of the webhook, stored with its
   * deliveries in the transaction of what it reports, whichever process reported it; nothing when the webhook is
   * gone or no one receives it. The receivers are read without a lock: taking one would order this against ingest
   * and other disables of the instance's webhooks, for a race whose worst is a delivery queued for a webhook
   * disabled at that very moment, which waits for it to be enabled again, as any delivery of a disabled webhook does.
   */
  async announce(
    sql: Tx,
    webhookId: string,
    make: (subject: Webhook) => Announcement,
    now: number,
  ): Promise<void> {
    const [subject] = await sql<Row[]>`SELECT * FROM webhooks WHERE webhook_id = ${webhookId}`;
    if (!subject) return;
    const a = make(toWebhook(subject));
    const e = a.draft;
    const rows = await sql<Row[]>`
      SELECT * FROM webhooks WHERE enabled AND (instance_id = ${e.instance_id} OR webhook_id = ${OPERATOR_WEBHOOK_ID})
      ORDER BY created_at, webhook_id`;
    const targets = announcementTargets(a, rows.map(toWebhook));
    if (targets.length === 0) return;
    const chat = chatKey(e.event, e.payload);
    await sql`
      INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at, chat)
      VALUES (${e.event_id}, ${e.instance_id}, ${e.event}, ${e.body}, ${targets.length}::integer, ${now}::bigint,
        ${chat})`;
    await this.enqueue(
      sql,
      targets.map((w) => ({
        e,
        delivery_id: newId('dlv', now),
        webhook_id: w.webhook_id,
        chat,
        now,
        held: false,
        ordered: false,
        lease: null,
        leaseMs: 0,
      })),
    );
  }

  /** The one wake-up of the workers: a notification on the store's channel, sent when the transaction commits. */
  async #wake(sql: Tx): Promise<void> {
    await this.db.notifyWork(sql);
  }
}

/** The result's lease still holds the delivery: its decision applies. */
const LEASE_HOLDS = 'COALESCE(d.lease_token = r.lease_token, false)';
/** The result's value where its lease holds the delivery, else the delivery's own. */
const held = (result: string, own: string) => `CASE WHEN ${LEASE_HOLDS} THEN ${result} ELSE ${own} END`;
/** The result's lease holds, or it is the latest: the delivery's last result becomes this one. */
const LAST_RESULT = lastResult(`${LEASE_HOLDS} OR ${isLatest('r.started_at')}`, {
  started_at: 'r.started_at',
  status_code: 'r.status_code',
  error: 'r.error',
});

const RECORD_COLUMNS = `delivery_id text, lease_token text, attempt integer, trigger text, started_at bigint,
  duration_ms integer, status_code integer, error text, response_body text, next_attempt_at bigint,
  next_attempt_reason text, status text, failure_reason text`;
