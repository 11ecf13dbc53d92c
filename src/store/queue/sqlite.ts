/**
 * The life of a delivery on SQLite (transitions.ts): every change of a delivery's state is made here, inside the
 * caller's transaction, with what follows from it: a chat whose queue moved gets its head made due, and the
 * dispatcher (or the media jobs) is woken for what became due. Leases are this process's, in memory (leases.ts).
 */
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
import type { Work } from '../records.ts';
import { toWebhook } from '../rows.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';
import type { Leases } from '../sqlite/leases.ts';
import {
  CHAT_HEAD,
  dueAtEnqueue,
  ENDED_BY_DISABLE,
  FINISHED,
  IN_CHAT_QUEUE,
  PROMOTABLE,
  RELEASE_CLAIM,
  RELEASE_HELD,
  RELEASE_WAITING,
  redeliveryReset,
} from './transitions.ts';

/** A chat's queue: the webhook's deliveries of one chat. */
interface Chat {
  webhook_id: string;
  chat: string;
}

/** A delivery to write: its webhook, id and chat, and what it waits for. */
export interface NewDelivery extends Chat {
  delivery_id: string;
  /** Its event's media is still to be downloaded (the caller wrote the media job before). */
  held: boolean;
  /** Its webhook orders by chat: it joins the chat's queue. */
  ordered: boolean;
  /** Handed off at ingest: the caller leases it, nobody need be woken. */
  taken: boolean;
}

/** An attempt's decision for its delivery, as planOutcome gives it. */
export interface Finish {
  last_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  status: string;
  next_attempt_at: number | null;
  failure_reason: string | null;
}

/** The queue's hot statements, their text built once. The head of chat (?2 webhook, ?3 chat) made due at ?1: */
const PROMOTE_HEAD = `UPDATE deliveries SET next_attempt_at = ?1
  WHERE seq = (${CHAT_HEAD('?2', '?3')}) AND ${PROMOTABLE('deliveries')}`;
/** An attempt's decision applied (?4 status, ?5 due, ?6 reason) to delivery ?7, its result (?1-?3) the last: */
const FINISH = `UPDATE deliveries SET attempts = attempts + 1, cycle_attempts = cycle_attempts + 1,
  next_trigger = 'scheduled', last_attempt_at = ?1, last_status_code = ?2, last_error = ?3,
  ${FINISHED('?4', '?5', '?6')}
  WHERE seq = ?7`;
/** A claim given back: delivery ?2 due at ?1 again, if still pending. */
const REQUEUE_CLAIM = `UPDATE deliveries SET ${RELEASE_CLAIM('?1')} WHERE delivery_id = ?2 AND status = 'pending'`;

export class SqliteQueue {
  readonly db: SqliteDatabase;
  readonly leases: Leases;
  /** Kinds of work already woken for in this turn of the event loop: one wake-up each is enough. */
  readonly #woken = new Set<Work>();

  constructor(db: SqliteDatabase, leases: Leases) {
    this.db = db;
    this.leases = leases;
  }

  /** An event row, with its chat (returned): how ingest and operational events store one. */
  insertEvent(e: EventDraft, deliveries: number, now: number): string {
    const chat = chatKey(e.event, e.payload);
    this.db
      .q(
        `INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at, chat, trace_context)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(e.event_id, e.instance_id, e.event, e.body, deliveries, now, chat, e.trace_context ?? null);
    return chat;
  }

  /** A pending delivery of `e` (its event written); returns its seq. */
  enqueue(e: EventDraft, d: NewDelivery, now: number): number {
    const row = this.db
      .q(
        `INSERT INTO deliveries (delivery_id, event_id, instance_id, webhook_id, event, status, created_at,
           next_attempt_at, chat)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      )
      .run(
        d.delivery_id,
        e.event_id,
        e.instance_id,
        d.webhook_id,
        e.event,
        now,
        dueAtEnqueue(d, now),
        d.chat,
      );
    if (d.held) this.#wake('media');
    if (d.ordered) this.advanceChats([d], now);
    else if (!d.held && !d.taken) this.#wake();
    return Number(row.lastInsertRowid);
  }

  /** Makes each chat's head due at `now` where it may be (PROMOTABLE); returns how many became due. */
  advanceChats(chats: Iterable<Chat>, now: number): number {
    const promote = this.db.q(PROMOTE_HEAD);
    let promoted = 0;
    for (const c of chats) promoted += Number(promote.run(now, c.webhook_id, c.chat).changes);
    if (promoted > 0) this.#wake();
    return promoted;
  }

  /** The event's media settled: its job gone, its held deliveries due (in a chat's queue, as its head). */
  releaseHeld(eventId: string, now: number): void {
    const released = Number(this.db.q(RELEASE_HELD('?1', '?2')).run(now, eventId).changes);
    this.db.q('DELETE FROM media_jobs WHERE event_id = ?').run(eventId);
    const queued = this.db
      .q(
        `SELECT webhook_id, chat FROM deliveries WHERE event_id = ? AND status = 'pending' AND ${IN_CHAT_QUEUE}`,
      )
      .all(eventId) as unknown as Chat[];
    if (released > 0) this.#wake();
    this.advanceChats(queued, now);
  }

  /**
   * An attempt's decision applied to its delivery while the claim's lease still holds it: returns its seq (for
   * advanceFinished), or null for a late result (its lease ran out, or was ended by a disable), which decides
   * nothing: whoever holds the delivery now does.
   */
  finish(claim: { delivery_id: string; lease_token: string }, d: Finish): number | null {
    const lease = this.leases.end(claim.delivery_id, claim.lease_token);
    if (!lease) return null;
    this.db
      .q(FINISH)
      .run(
        d.last_attempt_at,
        d.last_status_code,
        d.last_error,
        d.status,
        d.next_attempt_at,
        d.failure_reason,
        lease.seq,
      );
    return lease.seq;
  }

  /** After a batch of finish: the chats of those that finished (`finished`, their seqs) let their next one go. */
  advanceFinished(finished: number[], now: number): void {
    const chat = this.db.q(`SELECT webhook_id, chat FROM deliveries WHERE seq = ? AND ${IN_CHAT_QUEUE}`);
    const chats: Chat[] = [];
    for (const seq of finished) {
      const c = chat.get(seq) as unknown as Chat | undefined;
      if (c) chats.push(c);
    }
    this.advanceChats(chats, now);
  }

  /** Claims given back unstarted, each only while its very lease holds it: due again now. Returns how many. */
  requeueClaims(claims: { delivery_id: string; lease_token: string }[], now: number): number {
    const release = this.db.q(REQUEUE_CLAIM);
    let released = 0;
    for (const c of claims) {
      if (this.leases.release(c.delivery_id, c.lease_token)) {
        released += Number(release.run(now, c.delivery_id).changes);
      }
    }
    if (released > 0) this.#wake();
    return released;
  }

  /**
   * Redelivered (pending again), in seq order: those in a chat's queue go to its back, each at a place taken from
   * the deliveries' own sequence (so that no later delivery ever shares it), and their chats then advance.
   */
  requeue(seqs: number[], now: number): void {
    if (seqs.length === 0) return;
    const base = Number(
      this.db
        .q("UPDATE sqlite_sequence SET seq = seq + ?1 WHERE name = 'deliveries' RETURNING seq - ?1 AS base")
        .get(seqs.length)?.base,
    );
    const restart = this.db.q(
      `UPDATE deliveries SET ${redeliveryReset('?1', '?2')} WHERE seq = ?3
       RETURNING webhook_id, chat, ${IN_CHAT_QUEUE} AS queued`,
    );
    const chats = new Map<string, Chat>();
    for (const [i, seq] of seqs.entries()) {
      const r = restart.get(now, base + i + 1, seq);
      if (r?.queued) chats.set(`${r.webhook_id} ${r.chat}`, r as unknown as Chat);
    }
    this.advanceChats(chats.values(), now);
    this.#wake();
  }

  /**
   * Disabling a webhook ends its pending deliveries as failed; ending the leases leaves in-flight results nothing to
   * decide (finish). Only the disable that finds the webhook enabled announces it.
   */
  endForWebhook(webhookId: string, reason: string, now: number): void {
    const { changes } = this.db
      .q(
        `UPDATE webhooks SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ?
         WHERE webhook_id = ? AND enabled = 1`,
      )
      .run(reason, now, now, webhookId);
    if (changes > 0) this.announce(webhookId, (w) => webhookDisabled(w, disableReason(reason), now), now);
    this.db
      .q(`UPDATE deliveries SET ${ENDED_BY_DISABLE} WHERE webhook_id = ? AND status = 'pending'`)
      .run(webhookId);
    this.leases.endAll(webhookId);
  }

  /** A webhook no longer ordered by chat: whatever waited in its chats' queues is due. */
  unorder(webhookId: string, now: number): void {
    this.db.q(RELEASE_WAITING('?1', '?2')).run(now, webhookId);
  }

  /**
   * An operational event (domain/operational-events.ts) of what `make` says of the webhook, stored with its
   * deliveries in the transaction of what it reports; nothing when the webhook is gone or no one receives it.
   */
  announce(webhookId: string, make: (subject: Webhook) => Announcement, now: number): void {
    const row = this.db.q('SELECT * FROM webhooks WHERE webhook_id = ?').get(webhookId);
    if (!row) return;
    const a = make(toWebhook(row));
    const webhooks = this.db
      .q(
        `SELECT * FROM webhooks WHERE enabled = 1 AND (instance_id = ? OR webhook_id = ?)
         ORDER BY created_at, webhook_id`,
      )
      .all(a.draft.instance_id, OPERATOR_WEBHOOK_ID)
      .map(toWebhook);
    const targets = announcementTargets(a, webhooks);
    if (targets.length === 0) return;
    const chat = this.insertEvent(a.draft, targets.length, now);
    for (const w of targets) {
      const d = { webhook_id: w.webhook_id, delivery_id: newId('dlv', now), chat };
      this.enqueue(a.draft, { ...d, held: false, ordered: false, taken: false }, now);
    }
  }

  /** The one wake-up of the dispatcher (or the media jobs), once per turn of the event loop whatever the calls. */
  #wake(work: Work = 'deliveries'): void {
    if (this.#woken.has(work)) return;
    this.#woken.add(work);
    queueMicrotask(() => this.#woken.delete(work));
    this.db.notifyWork(work);
  }
}
