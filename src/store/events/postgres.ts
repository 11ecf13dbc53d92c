/**
 * Ingest on PostgreSQL: the ingests of one event-loop turn in one transaction and one durable commit (batch.ts), the
 * same six statements for the whole turn; a missing instance is found before anything is written and answered apart.
 */
import { chatKey } from '../../domain/chat-key.ts';
import { newId } from '../../domain/ids.ts';
import { repeatConflict, sessionChange } from '../../domain/store-rules.ts';
import type { EventDraft, Webhook } from '../../domain/types.ts';
import { InstanceMissing, StoreConflict } from '../errors.ts';
import type { Events } from '../ports.ts';
import type { Tx } from '../postgres/database.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { NewDelivery, PostgresQueue } from '../queue/postgres.ts';
import type { ClaimedDelivery, IngestResult } from '../records.ts';
import { toWebhook } from '../rows.ts';
import type { Settled } from '../same-turn.ts';
import { NEWER_STATUS } from '../sql-fragments.ts';
import { type IngestArrival, ingestByTurn } from './batch.ts';
import { HandOff, handedOffTo } from './hand-off.ts';

/** An event to store: its draft, the webhooks it goes to, and its call's time. */
interface Draft {
  e: EventDraft;
  targets: Webhook[];
  now: number;
  chat: string;
}

/** A conflict inside a shared turn: the turn is made again, one ingest per transaction. */
class TurnConflict extends Error {}

export class PostgresEvents extends QueueOperation<PostgresQueue> implements Events {
  ingest: Events['ingest'] = ingestByTurn(
    (arrivals) => this.#commit(arrivals),
    (err) => err instanceof TurnConflict,
  );

  /**
   * One transaction; the deliveries handed off are written leased. The ingests of one turn come from one process's
   * callers, so the room given with the first that brings one holds for the turn.
   */
  async #commit(arrivals: IngestArrival[]): Promise<Settled<IngestResult[]>[]> {
    const given = arrivals.find((a) => a.handOff)?.handOff;
    // Made anew if the transaction is made again (a deadlock's victim).
    const settled = await this.db.tx((sql) =>
      this.#store(sql, arrivals, new HandOff(given, this.db.leaseTokens.next())),
    );
    for (const [i, s] of settled.entries()) handedOffTo(arrivals[i], s);
    return settled;
  }

  async #store(sql: Tx, arrivals: IngestArrival[], handOff: HandOff): Promise<Settled<IngestResult[]>[]> {
    const ids = [...new Set(arrivals.map((a) => a.instanceId))];
    // FOR KEY SHARE: an instance cannot be deleted under this transaction (as the events' foreign key would).
    const present = new Set(
      (
        await sql<{ instance_id: string }[]>`
          SELECT instance_id FROM instances WHERE instance_id = ANY(${ids}::text[]) FOR KEY SHARE`
      ).map((r) => r.instance_id),
    );
    const live = arrivals.filter((a) => present.has(a.instanceId));
    const webhooks = live.length > 0 ? await this.#webhooks(sql, [...present]) : new Map();
    // The first occurrence of an event_id in the turn is the one stored; later ones are answered as repeats.
    const firsts = new Map<string, Draft>();
    for (const { instanceId, events, router, now } of live) {
      for (const e of events) {
        const first = firsts.get(e.event_id);
        if (!first) {
          const targets = router(e, webhooks.get(instanceId) ?? []);
          firsts.set(e.event_id, { e, targets, now, chat: chatKey(e.event, e.payload) });
        } else if (repeatConflict(e.event_id, first.e.instance_id, e.instance_id)) throw new TurnConflict();
      }
    }
    const drafts = [...firsts.values()];
    const fresh = await this.#insertEvents(sql, drafts);
    const seen = await this.#seen(
      sql,
      drafts.filter(({ e }) => !fresh.has(e.event_id)),
      arrivals.length,
    );
    const handedOff = await this.#insertDeliveries(
      sql,
      drafts.filter(({ e }) => fresh.has(e.event_id)),
      handOff,
    );
    // This very draft was stored now: not a repeat within the turn, nor of an event stored before.
    const storedNow = (e: EventDraft) => firsts.get(e.event_id)?.e === e && fresh.has(e.event_id);
    await this.#applySessions(sql, live, storedNow);
    const deliveries = (eventId: string) =>
      fresh.has(eventId) ? (firsts.get(eventId)?.targets.length as number) : (seen.get(eventId) as number);
    return arrivals.map((a) => {
      if (!present.has(a.instanceId)) return { error: new InstanceMissing(a.instanceId) };
      return {
        ok: a.events.map((e) => {
          const result: IngestResult = {
            event_id: e.event_id,
            deliveries: deliveries(e.event_id),
            duplicate: !storedNow(e),
          };
          const claims = storedNow(e) ? handedOff.get(e.event_id) : undefined;
          if (claims) result.handedOff = claims;
          return result;
        }),
      };
    });
  }

  /**
   * Each instance takes the newest session.status stored now, unless it already shows a newer one: another post's,
   * committed first or waited for (the UPDATE's row lock, then its condition read again on that post's row). In
   * instance order, so that two turns never wait for each other's rows in a cycle.
   */
  async #applySessions(sql: Tx, live: IngestArrival[], storedNow: (e: EventDraft) => boolean): Promise<void> {
    const byInstance = Map.groupBy(live, (a) => a.instanceId);
    for (const instanceId of [...byInstance.keys()].sort()) {
      const arrivals = byInstance.get(instanceId) as IngestArrival[];
      const change = sessionChange(arrivals.flatMap((a) => a.events.filter(storedNow)));
      if (!change) continue;
      await sql`
        UPDATE instances SET status = n.status, phone = n.phone, status_at = n.at, status_event_id = n.id
        FROM (SELECT ${change.status}::text AS status, ${change.phone}::text AS phone, ${change.at}::bigint AS at,
                     ${change.event_id}::text AS id) n
        WHERE instance_id = ${instanceId} AND ${sql.unsafe(NEWER_STATUS('n.at', 'n.id', ' COLLATE "C"'))}`;
    }
  }

  /** FOR SHARE: disabling a webhook meanwhile waits for this transaction, then fails what it queued. */
  async #webhooks(sql: Tx, instanceIds: string[]): Promise<Map<string, Webhook[]>> {
    const rows = await sql`SELECT * FROM webhooks WHERE instance_id = ANY(${instanceIds}::text[]) AND enabled
                           ORDER BY created_at, webhook_id FOR SHARE`;
    return Map.groupBy(rows.map(toWebhook), (w) => w.instance_id);
  }

  /** The event_ids stored now. ON CONFLICT: another process storing the same one makes this wait for it, then skip. */
  async #insertEvents(sql: Tx, drafts: Draft[]): Promise<Set<string>> {
    if (drafts.length === 0) return new Set();
    const inserted = await sql<{ event_id: string }[]>`
      INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at, chat, trace_context)
      SELECT e.event_id, e.instance_id, e.event, e.body, e.deliveries, e.created_at, e.chat, e.trace_context
      FROM unnest(${drafts.map(({ e }) => e.event_id)}::text[], ${drafts.map(({ e }) => e.instance_id)}::text[],
                  ${drafts.map(({ e }) => e.event)}::text[], ${drafts.map(({ e }) => e.body)}::text[],
                  ${drafts.map(({ targets }) => targets.length)}::integer[],
                  ${drafts.map(({ now }) => now)}::bigint[], ${drafts.map(({ chat }) => chat)}::text[],
                  ${drafts.map(({ e }) => e.trace_context ?? null)}::text[])
           AS e(event_id, instance_id, event, body, deliveries, created_at, chat, trace_context)
      -- In key order: two turns that share event_ids wait for each other's in one order, never in a cycle.
      ORDER BY e.event_id
      ON CONFLICT (event_id) DO NOTHING
      RETURNING event_id`;
    return new Set(inserted.map((r) => r.event_id));
  }

  /**
   * Deliveries counts of events stored before. An event_id of another instance refuses the call when it is alone,
   * and sends a shared turn back to be made one by one.
   */
  async #seen(sql: Tx, repeats: { e: EventDraft }[], calls: number): Promise<Map<string, number>> {
    if (repeats.length === 0) return new Map();
    const rows = await sql<{ event_id: string; instance_id: string; deliveries: number }[]>`
      SELECT event_id, instance_id, deliveries FROM events
      WHERE event_id = ANY(${repeats.map(({ e }) => e.event_id)}::text[])`;
    const byId = new Map(rows.map((r) => [r.event_id, r]));
    for (const { e } of repeats) {
      const conflict = repeatConflict(e.event_id, byId.get(e.event_id)?.instance_id ?? '', e.instance_id);
      if (conflict) throw calls === 1 ? new StoreConflict(conflict) : new TurnConflict();
    }
    return new Map(rows.map((r) => [r.event_id, r.deliveries]));
  }

  /**
   * Deliveries of an event whose media is still to be downloaded wait for it (media-jobs/ settles them): their jobs
   * are written first, so that the queue holds them. Those handed off are written leased. Returns those, by event.
   */
  async #insertDeliveries(
    sql: Tx,
    stored: Draft[],
    handOff: HandOff,
  ): Promise<Map<string, ClaimedDelivery[]>> {
    const handedOff = new Map<string, ClaimedDelivery[]>();
    const rows = stored.flatMap(({ e, targets, now, chat }) =>
      targets.map((w): NewDelivery => {
        const delivery_id = newId('dlv', now);
        // A webhook ordered by chat: its delivery joins the chat's queue (queue/), never handed off.
        const ordered = w.ordering === 'chat';
        const claim = ordered ? null : handOff.take(e, w, delivery_id, now);
        if (claim) {
          const ofEvent = handedOff.get(e.event_id);
          if (ofEvent) ofEvent.push(claim);
          else handedOff.set(e.event_id, [claim]);
        }
        return {
          e,
          delivery_id,
          webhook_id: w.webhook_id,
          chat,
          now,
          held: e.download != null,
          ordered,
          lease: claim ? handOff.token : null,
          leaseMs: handOff.leaseMs,
        };
      }),
    );
    if (rows.length === 0) return handedOff;
    const jobs = stored.filter(({ e, targets }) => e.download != null && targets.length > 0);
    if (jobs.length > 0) {
      const download = ({ e }: Draft) => e.download as NonNullable<EventDraft['download']>;
      await sql`
        INSERT INTO media_jobs (event_id, url, mimetype, filename, engine_error, via_engine, next_try_at)
        SELECT j.event_id, j.url, j.mimetype, j.filename, j.engine_error, j.via_engine::boolean, j.next_try_at
        FROM unnest(${jobs.map(({ e }) => e.event_id)}::text[], ${jobs.map((d) => download(d).url)}::text[],
                    ${jobs.map((d) => download(d).mimetype)}::text[], ${jobs.map((d) => download(d).filename)}::text[],
                    ${jobs.map((d) => download(d).engine_error ?? null)}::text[],
                    ${jobs.map((d) => String(download(d).via_engine === true))}::text[],
                    ${jobs.map(({ now }) => now)}::bigint[])
             AS j(event_id, url, mimetype, filename, engine_error, via_engine, next_try_at)`;
    }
    await this.queue.enqueue(sql, rows);
    return handedOff;
  }
}
