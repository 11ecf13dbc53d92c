/**
 * Ingest on SQLite: events and their deliveries stored in one durable transaction per turn (batch.ts), the fresh
 * deliveries it hands off leased in this process's leases (sqlite/leases.ts), which claims and outcomes share.
 */

import { type LeaseTokens, newId } from '../../domain/ids.ts';
import { repeatConflict, sessionChange } from '../../domain/store-rules.ts';
import type { EventDraft, Webhook } from '../../domain/types.ts';
import { InstanceMissing, StoreConflict } from '../errors.ts';
import type { Events } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { SqliteQueue } from '../queue/sqlite.ts';
import type { ClaimedDelivery, IngestResult, Router } from '../records.ts';
import { toWebhook } from '../rows.ts';
import type { Settled } from '../same-turn.ts';
import { NEWER_STATUS } from '../sql-fragments.ts';
import type { Lease, Leases } from '../sqlite/leases.ts';
import { type IngestArrival, ingestByTurn } from './batch.ts';
import { HandOff, handedOffTo } from './hand-off.ts';

export class SqliteEvents extends QueueOperation<SqliteQueue> implements Events {
  readonly #leases: Leases;
  readonly #leaseTokens: LeaseTokens;
  /**
   * The enabled webhooks of each instance ingest has met, read once instead of at every ingest: one process owns
   * the database, and it empties this at every change of either table (onCatalogChange).
   */
  readonly #catalog = new Map<string, Webhook[]>();

  constructor(queue: SqliteQueue, leaseTokens: LeaseTokens) {
    super(queue);
    this.#leases = queue.leases;
    this.#leaseTokens = leaseTokens;
    this.db.onCatalogChange(() => this.#catalog.clear());
  }

  /** The ingests of one turn in one transaction and one flush: the 202 means durable, flushed off the event loop. */
  ingest: Events['ingest'] = ingestByTurn(
    (arrivals) => this.#commit(arrivals),
    (err) => err instanceof StoreConflict,
  );

  /**
   * One transaction; the deliveries handed off are leased in memory once it has committed. The ingests of one turn
   * come from one process's callers, so the room given with the first that brings one holds for the turn.
   */
  #commit(arrivals: IngestArrival[]): Promise<Settled<IngestResult[]>[]> {
    const handOff = new HandOff(arrivals.find((a) => a.handOff)?.handOff, this.#leaseTokens.next());
    const leases: Lease[] = [];
    return this.db.durableTx(
      () => this.#store(arrivals, handOff, leases),
      (settled) => {
        for (const lease of leases) this.#leases.take(lease);
        for (const [i, s] of settled.entries()) handedOffTo(arrivals[i], s);
      },
    );
  }

  #store(arrivals: IngestArrival[], handOff: HandOff, leases: Lease[]): Settled<IngestResult[]>[] {
    const settled = arrivals.map(({ instanceId, events, router, now }): Settled<IngestResult[]> => {
      const webhooks = this.#enabledWebhooks(instanceId);
      if (!webhooks) return { error: new InstanceMissing(instanceId) };
      return { ok: events.map((e) => this.#ingestOne(e, webhooks, router, now, handOff, leases)) };
    });
    return settled;
  }

  /** The instance's enabled webhooks, or null when there is no such instance. */
  #enabledWebhooks(instanceId: string): Webhook[] | null {
    const known = this.#catalog.get(instanceId);
    if (known) return known;
    if (!this.db.q('SELECT 1 FROM instances WHERE instance_id = ?').get(instanceId)) return null;
    const webhooks = this.db
      .q('SELECT * FROM webhooks WHERE instance_id = ? AND enabled = 1 ORDER BY created_at, webhook_id')
      .all(instanceId)
      .map(toWebhook);
    this.#catalog.set(instanceId, webhooks);
    return webhooks;
  }

  #ingestOne(
    e: EventDraft,
    webhooks: Webhook[],
    router: Router,
    now: number,
    handOff: HandOff,
    leases: Lease[],
  ): IngestResult {
    const seen = this.db.q('SELECT instance_id, deliveries FROM events WHERE event_id = ?').get(e.event_id);
    if (seen) {
      const conflict = repeatConflict(e.event_id, seen.instance_id as string, e.instance_id);
      if (conflict) throw new StoreConflict(conflict);
      return { event_id: e.event_id, deliveries: seen.deliveries as number, duplicate: true };
    }
    const targets = router(e, webhooks);
    const chat = this.queue.insertEvent(e, targets.length, now);
    let handedOff: ClaimedDelivery[] | undefined;
    // Deliveries of an event whose media is still to be downloaded wait for it (media-jobs/ settles them): its job
    // is written first, so that the queue holds them.
    const held = e.download != null && targets.length > 0;
    if (held) {
      const { url, mimetype, filename, engine_error, via_engine } = e.download as NonNullable<
        EventDraft['download']
      >;
      this.db
        .q(
          `INSERT INTO media_jobs (event_id, url, mimetype, filename, engine_error, via_engine, next_try_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(e.event_id, url, mimetype, filename, engine_error ?? null, via_engine ? 1 : 0, now);
    }
    for (const w of targets) {
      const delivery_id = newId('dlv', now);
      // A webhook ordered by chat: its delivery joins the chat's queue (queue/), never handed off.
      const ordered = w.ordering === 'chat';
      // Handed off: leased in memory (as a claim leases) once the transaction has committed.
      const claim = ordered ? null : handOff.take(e, w, delivery_id, now);
      const d = { webhook_id: w.webhook_id, delivery_id, chat, held, ordered, taken: claim !== null };
      const seq = this.queue.enqueue(e, d, now);
      if (claim) {
        if (handedOff) handedOff.push(claim);
        else handedOff = [claim];
        leases.push({
          delivery_id,
          seq,
          webhook_id: w.webhook_id,
          token: handOff.token,
          until: now + handOff.leaseMs,
        });
      }
    }
    // Only over an older session.status: posts of one session's changes come in any order.
    const session = sessionChange([e]);
    if (session) {
      this.db
        .q(
          `UPDATE instances SET status = ?1, phone = ?2, status_at = ?3, status_event_id = ?4
           WHERE instance_id = ?5 AND ${NEWER_STATUS('?3', '?4')}`,
        )
        .run(session.status, session.phone, session.at, session.event_id, e.instance_id);
    }
    const result: IngestResult = { event_id: e.event_id, deliveries: targets.length, duplicate: false };
    if (handedOff) result.handedOff = handedOff;
    return result;
  }
}
