/**
 * Claims on SQLite: due deliveries leased to this process, per webhook, at most the room each has left; the next due
 * time; and the queue's depth for /metrics. Only reads: leases are held in memory (leases.ts), one process owning
 * the database.
 */

import type { LeaseTokens } from '../../domain/ids.ts';
import { PACE_HORIZON_MS, takeSlots } from '../../domain/pacing.ts';
import type { Claims } from '../ports.ts';
import type { ClaimedDelivery, QueueStats } from '../records.ts';
import { type ClaimTarget, claimOf } from '../rows.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';
import type { Leases } from '../sqlite/leases.ts';

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

export class SqliteClaims implements Claims {
  readonly #db: SqliteDatabase;
  readonly #leases: Leases;
  readonly #leaseTokens: LeaseTokens;
  /** Per rate-limited webhook, its next free start slot: in memory, as leases are (one process). */
  readonly #slots = new Map<string, number>();
  #rotation = 0;

  constructor(db: SqliteDatabase, leases: Leases, leaseTokens: LeaseTokens) {
    this.#db = db;
    this.#leases = leases;
    this.#leaseTokens = leaseTokens;
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
      const target = this.#db.q(
        `SELECT webhook_id, destination_url, destination_sealed, secret_sealed, previous_secret_sealed,
           previous_secret_until, headers_sealed, rate_limit, standard_webhooks FROM webhooks WHERE webhook_id = ?`,
      );
      const fetch = this.#db.rows(
        `SELECT d.delivery_id, d.event_id, d.instance_id, d.attempts, d.cycle_attempts, d.next_trigger, e.body,
           e.trace_context
         FROM deliveries d JOIN events e ON e.event_id = d.event_id WHERE d.seq = ?`,
      );
      const token = this.#leaseTokens.next();
      const claimed: ClaimedDelivery[] = [];
      const start = this.#rotation++ % Math.max(webhooks.length, 1);
      for (let i = 0; i < webhooks.length && claimed.length < limit; i++) {
        const [webhookId] = webhooks[(start + i) % webhooks.length];
        let n = Math.min(room(webhookId, 0), limit - claimed.length);
        if (n <= 0) continue;
        const to = target.get(webhookId) as unknown as ClaimTarget;
        const rate = to.rate_limit;
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
          const [delivery_id, event_id, instance_id, attempts, cycle_attempts, trigger, body, trace] =
            fetch.get(seq) as unknown as [
              string,
              string,
              string,
              number,
              number,
              ClaimedDelivery['trigger'],
              string,
              string | null,
            ];
          this.#leases.take({ delivery_id, seq, webhook_id: webhookId, token, until: now + leaseMs });
          claimed.push(
            claimOf(
              to,
              now,
              token,
              paced ? paced.slots[taken] : 0,
              delivery_id,
              event_id,
              instance_id,
              attempts,
              cycle_attempts,
              trigger,
              body,
              trace,
            ),
          );
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
