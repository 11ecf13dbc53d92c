/** The delivery queue on SQLite: ingest, leased claims, outcomes, and ending a disabled webhook's work. */

import { type HealthChange, healthChanges } from '../../domain/health.ts';
import { LeaseTokens, newId } from '../../domain/ids.ts';
import { PACE_HORIZON_MS, takeSlots } from '../../domain/pacing.ts';
import {
  disablesWebhook,
  healthInput,
  planOutcome,
  repeatConflict,
  sessionChange,
} from '../../domain/store-rules.ts';
import type { EventDraft, Webhook } from '../../domain/types.ts';
import { HandOff } from '../intake.ts';
import { toWebhook } from '../rows.ts';
import { SameTurn, type Settled } from '../same-turn.ts';
import {
  type AttemptResult,
  type ClaimedDelivery,
  type IngestArrival,
  type IngestResult,
  InstanceMissing,
  type Intake,
  type QueueStats,
  type Router,
  StoreConflict,
} from '../store.ts';
import type { SqliteDatabase } from './database.ts';
import { type Lease, Leases } from './leases.ts';

/** Enabled webhooks with a delivery due at ?1, in id order: one index step per webhook with anything pending. */
const WEBHOOKS_DUE = `
  WITH RECURSIVE pending(webhook_id) AS (
    SELECT MIN(webhook_id) FROM deliveries INDEXED BY deliveries_webhook_due WHERE status = 'pending'
    UNION ALL
    SELECT (SELECT MIN(webhook_id) FROM deliveries INDEXED BY deliveries_webhook_due
            WHERE status = 'pending' AND webhook_id > pending.webhook_id)
    FROM pending WHERE pending.webhook_id IS NOT NULL
  )
  SELECT p.webhook_id FROM pending p JOIN webhooks w ON w.webhook_id = p.webhook_id
  WHERE w.enabled = 1 AND EXISTS (
    SELECT 1 FROM deliveries d INDEXED BY deliveries_webhook_due
    WHERE d.webhook_id = p.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= ?1)
  ORDER BY p.webhook_id`;

export class SqliteQueue {
  readonly #db: SqliteDatabase;
  readonly #leases = new Leases();
  /** Per rate-limited webhook, its next free start slot: in memory, as leases are (one process). */
  readonly #slots = new Map<string, number>();
  readonly #applyHealth: (changes: HealthChange[]) => void;
  #rotation = 0;
  #intake: Intake | null = null;
  readonly #leaseTokens = new LeaseTokens();
  /**
   * The enabled webhooks of each instance ingest has met, read once instead of at every ingest: one process owns
   * the database, and it empties this at every change of either table (onCatalogChange).
   */
  readonly #catalog = new Map<string, Webhook[]>();

  constructor(db: SqliteDatabase, applyHealth: (changes: HealthChange[]) => void) {
    this.#db = db;
    this.#applyHealth = applyHealth;
    db.onCatalogChange(() => this.#catalog.clear());
  }

  /** Disabling ends pending retries; ending the leases leaves in-flight results nothing to decide (recordAttempts). */
  disable(webhookId: string, reason: string, now: number): void {
    this.#db
      .q(
        `UPDATE webhooks SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ?
       WHERE webhook_id = ? AND enabled = 1`,
      )
      .run(reason, now, now, webhookId);
    this.#db
      .q(
        `UPDATE deliveries SET status = 'failed', failure_reason = 'webhook_disabled', next_attempt_at = NULL
       WHERE webhook_id = ? AND status = 'pending'`,
      )
      .run(webhookId);
    this.#leases.endAll(webhookId);
  }

  readonly #arrivals = new SameTurn<IngestArrival, IngestResult[]>((arrivals) =>
    this.#ingestTogether(arrivals),
  );

  ingest(instanceId: string, events: EventDraft[], router: Router, now: number): Promise<IngestResult[]> {
    return this.#arrivals.call({ instanceId, events, router, now });
  }

  setIntake(intake: Intake | null): void {
    this.#intake = intake;
  }

  /**
   * The ingests of one turn in one transaction and one flush: the 202 means durable, and the flush is awaited off
   * the event loop. One that fails for its own reason fails alone: a missing instance is answered apart before
   * anything of it is written; a repeated event_id of another instance is found while writing, so then the turn is
   * rolled back and each ingest made again, in order, in a transaction of its own. No savepoint per call: SQLite
   * copies every page a savepoint changes into a journal (a temp file past 64 KiB), which every turn would pay for a
   * failure that almost never comes.
   */
  async #ingestTogether(arrivals: IngestArrival[]): Promise<Settled<IngestResult[]>[]> {
    try {
      return await this.#commit(arrivals);
    } catch (err) {
      if (!(err instanceof StoreConflict) || arrivals.length === 1) throw err;
      // In the order they came, as one transaction would have taken them: the first to use an event_id keeps it.
      const settled: Settled<IngestResult[]>[] = [];
      for (const a of arrivals) {
        try {
          settled.push(...(await this.#commit([a])));
        } catch (error) {
          settled.push({ error });
        }
      }
      return settled;
    }
  }

  /** One transaction; the deliveries the intake took are leased to it, and handed over, once it has committed. */
  #commit(arrivals: IngestArrival[]): Promise<Settled<IngestResult[]>[]> {
    const handOff = new HandOff(this.#intake, this.#leaseTokens.next());
    const leases: Lease[] = [];
    return this.#db.durableTx(
      () => this.#store(arrivals, handOff, leases),
      () => {
        for (const lease of leases) this.#leases.take(lease);
        handOff.deliver();
      },
    );
  }

  #store(arrivals: IngestArrival[], handOff: HandOff, leases: Lease[]): Settled<IngestResult[]>[] {
    const settled = arrivals.map(({ instanceId, events, router, now }): Settled<IngestResult[]> => {
      const webhooks = this.#enabledWebhooks(instanceId);
      if (!webhooks) return { error: new InstanceMissing(instanceId) };
      return { ok: events.map((e) => this.#ingestOne(e, webhooks, router, now, handOff, leases)) };
    });
    if (handOff.left > 0) this.#db.notifyWork();
    // Deliveries of an event with media wait for its download: the media jobs have work.
    if (arrivals.some((a) => a.events.some((e) => e.download != null))) this.#db.notifyWork('media');
    return settled;
  }

  /** The instance's enabled webhooks, or null when there is no such instance. */
  #enabledWebhooks(instanceId: string): Webhook[] | null {
    const known = this.#catalog.get(instanceId);
    if (known) return known;
    if (!this.#db.q('SELECT 1 FROM instances WHERE instance_id = ?').get(instanceId)) return null;
    const webhooks = this.#db
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
    const seen = this.#db.q('SELECT instance_id, deliveries FROM events WHERE event_id = ?').get(e.event_id);
    if (seen) {
      const conflict = repeatConflict(e.event_id, seen.instance_id as string, e.instance_id);
      if (conflict) throw new StoreConflict(conflict);
      return { event_id: e.event_id, deliveries: seen.deliveries as number, duplicate: true };
    }
    const targets = router(e, webhooks);
    this.#db
      .q(
        'INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(e.event_id, e.instance_id, e.event, e.body, targets.length, now);
    const insert = this.#db.q(
      `INSERT INTO deliveries (delivery_id, event_id, instance_id, webhook_id, event, status, created_at, next_attempt_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    );
    // Deliveries of an event whose media is still to be downloaded wait for it (media-jobs.ts settles them).
    const held = e.download != null && targets.length > 0;
    for (const w of targets) {
      const delivery_id = newId('dlv', now);
      const row = insert.run(
        delivery_id,
        e.event_id,
        e.instance_id,
        w.webhook_id,
        e.event,
        now,
        held ? null : now,
      );
      // Taken by the intake: leased in memory (as a claim leases) once the transaction has committed.
      if (handOff.offer(e, w, delivery_id, now)) {
        const seq = Number(row.lastInsertRowid);
        leases.push({
          delivery_id,
          seq,
          webhook_id: w.webhook_id,
          token: handOff.token,
          until: now + handOff.leaseMs,
        });
      }
    }
    if (held) {
      const { url, mimetype, filename, engine_error } = e.download as NonNullable<EventDraft['download']>;
      this.#db
        .q(
          `INSERT INTO media_jobs (event_id, url, mimetype, filename, engine_error, next_try_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(e.event_id, url, mimetype, filename, engine_error ?? null, now);
    }
    const session = sessionChange([e]);
    if (session) {
      this.#db
        .q('UPDATE instances SET status = ?, phone = ? WHERE instance_id = ?')
        .run(session.status, session.phone, e.instance_id);
    }
    return { event_id: e.event_id, deliveries: targets.length, duplicate: false };
  }

  /**
   * Claims per webhook, oldest due first, at most the room each has left. Asking each webhook with deliveries
   * due for its own index range means a webhook at its in-flight cap costs nothing, however large its backlog;
   * the starting webhook rotates so that a small batch is shared fairly. Only reads: leases are held in memory
   * (leases.ts); the scan starts after the rows this process already holds (Resume), and fetches the rest.
   */
  async claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    // One process per SQLite database: its own in-flight count is all there is, so `leased` is 0.
    room: (webhookId: string, leased: number) => number,
  ) {
    return this.#db.read(() => {
      // Only webhooks with deliveries due: the pending index is skipped through from one webhook to the next, so
      // a webhook with nothing pending costs a claim nothing, however many webhooks there are.
      const webhooks = this.#db.rows(WEBHOOKS_DUE).all(now) as unknown as [string][];
      // The partial index (webhook_id, next_attempt_at) holds the row key: this scan never reads the table. It
      // starts where the webhook's last claim stopped (leases.ts, Resume): the rows before are held.
      const due = this.#db.rows(
        `SELECT seq, next_attempt_at FROM deliveries
         WHERE webhook_id = ?1 AND status = 'pending' AND next_attempt_at <= ?2 AND next_attempt_at >= ?3
           AND (next_attempt_at > ?3 OR seq > ?4)
         ORDER BY next_attempt_at, seq`,
      );
      // The webhook's own fields are read once per webhook, not joined into every row.
      const target = this.#db.rows(
        `SELECT destination_url, secret_sealed, CASE WHEN previous_secret_until > ? THEN previous_secret_sealed END,
           headers_sealed, rate_limit FROM webhooks WHERE webhook_id = ?`,
      );
      const fetch = this.#db.rows(
        `SELECT d.delivery_id, d.event_id, d.instance_id, d.attempts, d.cycle_attempts, d.next_trigger, e.body
         FROM deliveries d JOIN events e ON e.event_id = d.event_id WHERE d.seq = ?`,
      );
      const token = this.#leaseTokens.next();
      const claimed: ClaimedDelivery[] = [];
      const start = this.#rotation++ % Math.max(webhooks.length, 1);
      for (let i = 0; i < webhooks.length && claimed.length < limit; i++) {
        const [webhookId] = webhooks[(start + i) % webhooks.length];
        let n = Math.min(room(webhookId, 0), limit - claimed.length);
        if (n <= 0) continue;
        const [destination_url, secret_sealed, previous_secret_sealed, headers_sealed, rate] = target.get(
          now,
          webhookId,
        ) as unknown as [string, string | null, string | null, string | null, number | null];
        // A rate limit: only as many as have a start slot within the horizon, each claimed for its slot.
        const paced = rate ? takeSlots(rate, this.#slots.get(webhookId) ?? 0, now, n, PACE_HORIZON_MS) : null;
        if (paced) n = paced.slots.length;
        if (n <= 0) continue;
        const from = this.#leases.resumeAt(webhookId, now, leaseMs) ?? {
          at: Number.MIN_SAFE_INTEGER,
          seq: 0,
        };
        // Read row by row, and only as far as needed: past the resume point the rows are rarely held.
        const rows = due.iterate(webhookId, now, from.at, from.seq) as Iterable<[number, number]>;
        let last: [number, number] | null = null;
        let exhausted = true;
        let taken = 0;
        for (const row of rows) {
          if (n === 0) {
            exhausted = false;
            break;
          }
          last = row;
          const [seq] = row;
          if (this.#leases.holds(webhookId, seq, now)) continue;
          const [delivery_id, event_id, instance_id, attempts, cycle_attempts, trigger, body] = fetch.get(
            seq,
          ) as unknown as [string, string, string, number, number, ClaimedDelivery['trigger'], string];
          this.#leases.take({ delivery_id, seq, webhook_id: webhookId, token, until: now + leaseMs });
          claimed.push({
            delivery_id,
            event_id,
            instance_id,
            webhook_id: webhookId,
            destination_url,
            secret_sealed,
            previous_secret_sealed,
            headers_sealed,
            body,
            start_at: paced ? paced.slots[taken] : 0,
            rate_limit: rate,
            cycle_attempt: cycle_attempts + 1,
            attempt: attempts + 1,
            trigger,
            lease_token: token,
          });
          taken++;
          n--;
        }
        if (exhausted) this.#leases.restart(webhookId);
        else if (last) this.#leases.lookedUpTo(webhookId, last[1], last[0], now);
        if (paced && taken > 0) this.#slots.set(webhookId, paced.slots[taken] ?? paced.nextAt);
      }
      return claimed;
    });
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    this.#db.tx(() => {
      // A delivery deleted mid-attempt (its webhook or instance removed) leaves nothing to log the attempt on.
      const log = this.#db.q(
        `INSERT INTO attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body,
          next_attempt_at, next_attempt_reason)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM deliveries WHERE delivery_id = ?1)`,
      );
      // A result whose lease was lost is counted, and is the last result if it is the latest, but decides nothing.
      const late = this.#db.q(
        `UPDATE deliveries SET attempts = attempts + 1,
           last_status_code = CASE WHEN last_attempt_at IS NULL OR last_attempt_at <= ?1 THEN ?2 ELSE last_status_code END,
           last_error = CASE WHEN last_attempt_at IS NULL OR last_attempt_at <= ?1 THEN ?3 ELSE last_error END,
           last_attempt_at = CASE WHEN last_attempt_at IS NULL OR last_attempt_at <= ?1 THEN ?1 ELSE last_attempt_at END
         WHERE delivery_id = ?4`,
      );
      const apply = this.#db.q(
        `UPDATE deliveries SET attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, next_trigger = 'scheduled',
           last_attempt_at = ?, last_status_code = ?, last_error = ?, status = ?, next_attempt_at = ?, failure_reason = ?
         WHERE seq = ?`,
      );
      for (const { claim, outcome, decision } of results) {
        const { attempt: a, delivery: d } = planOutcome(outcome, decision);
        log.run(
          claim.delivery_id,
          claim.attempt,
          claim.trigger,
          a.started_at,
          a.duration_ms,
          a.status_code,
          a.error,
          a.response_body,
          a.next_attempt_at,
          a.next_attempt_reason,
        );
        // A lease that ran out, or ended by disabling, leaves the decision to whoever holds the delivery now.
        const lease = this.#leases.end(claim.delivery_id, claim.lease_token);
        if (lease) {
          apply.run(
            d.last_attempt_at,
            d.last_status_code,
            d.last_error,
            d.status,
            d.next_attempt_at,
            d.failure_reason,
            lease.seq,
          );
        } else {
          late.run(d.last_attempt_at, d.last_status_code, d.last_error, claim.delivery_id);
        }
        if (disablesWebhook(decision)) this.disable(claim.webhook_id, 'gone', now);
      }
      this.#applyHealth(healthChanges(results.map(healthInput)));
    }, 'lazy');
  }

  async releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number) {
    if (claims.length === 0) return 0;
    return this.#db.tx(() => {
      const release = this.#db.q(
        `UPDATE deliveries SET next_attempt_at = ? WHERE delivery_id = ? AND status = 'pending'`,
      );
      let released = 0;
      for (const c of claims) {
        if (this.#leases.release(c.delivery_id, c.lease_token)) {
          released += Number(release.run(now, c.delivery_id).changes);
        }
      }
      if (released > 0) this.#db.notifyWork();
      return released;
    });
  }

  async nextDueAt(after: number): Promise<number | null> {
    const row = this.#db
      .q(
        "SELECT MIN(next_attempt_at) AS due FROM deliveries WHERE status = 'pending' AND next_attempt_at > ?",
      )
      .get(after);
    return (row?.due as number | null) ?? null;
  }

  async queueStats(now: number): Promise<QueueStats> {
    // Deliveries under a lease are in flight, not waiting: "due" leaves them out.
    const row = this.#db
      .q(
        `WITH leased(seq) AS (SELECT value FROM json_each(?2))
         SELECT COUNT(*) AS pending,
                COALESCE(SUM(next_attempt_at <= ?1 AND seq NOT IN leased), 0) AS due,
                MIN(CASE WHEN next_attempt_at <= ?1 AND seq NOT IN leased THEN next_attempt_at END) AS oldest
         FROM deliveries WHERE status = 'pending'`,
      )
      .get(now, JSON.stringify(this.#leases.seqs(now)));
    return {
      pending: Number(row?.pending ?? 0),
      due: Number(row?.due ?? 0),
      oldest_due_at: (row?.oldest as number | null) ?? null,
    };
  }
}
