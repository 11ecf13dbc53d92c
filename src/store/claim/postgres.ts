/**
 * Claims on PostgreSQL, shared by any number of processes: leased (`FOR UPDATE SKIP LOCKED`), serialised per
 * webhook by an advisory lock, with the per-webhook cap counted across workers and rate limits paced by a slot
 * every process shares; the lead's full claim wakes the other workers; the next due time, and the queue's depth
 * for /metrics.
 */

import { PACE_HORIZON_MS, takeSlots } from '../../domain/pacing.ts';
import type { AttemptTrigger } from '../../domain/types.ts';
import type { Claims } from '../ports.ts';
import type { PostgresDatabase, Tx } from '../postgres/database.ts';
import type { ClaimedDelivery, QueueStats } from '../records.ts';
import { type ClaimTarget, claimOf } from '../rows.ts';

/** A claimed delivery as its UPDATE returns it, with its webhook's columns and its event's body. */
type ClaimRow = ClaimTarget & {
  seq: number;
  delivery_id: string;
  event_id: string;
  instance_id: string;
  attempts: number;
  cycle_attempts: number;
  next_trigger: AttemptTrigger;
  body: string;
  trace_context: string | null;
};

/** First key of the advisory locks that serialise claims per webhook (the second is the webhook id's hash). */
const CLAIM_LOCK = 0x48524c44; // "HRLD"

export class PostgresClaims implements Claims {
  readonly #db: PostgresDatabase;
  /** The webhook that led the previous claim; the next one starts after it, so a small batch is shared fairly. */
  #lastLead = '';

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Claims per webhook, oldest due first. Claims for one webhook are serialised by an advisory lock (taken in one
   * global order, so two workers never deadlock); holding it, the count of the webhook's unexpired leases held by
   * other processes is exact, and `room` adds this worker's own attempts in flight (which it knows better than its
   * leases: a finished attempt keeps its lease until its outcome is written) to tell what it may take.
   * `SKIP LOCKED` passes over rows another transaction is changing (an outcome being recorded, a redelivery).
   */
  async claimDue(
    now: number,
    limit: number,
    leaseMs: number,
    room: (webhookId: string, leased: number) => number,
  ): Promise<ClaimedDelivery[]> {
    return this.#db.tx(async (sql) => {
      const locked = await sql<{ webhook_id: string; rate_limit: number | null }[]>`
        WITH RECURSIVE pending(webhook_id) AS (
          -- Webhooks with anything pending, skipping through the pending index from one to the next: a webhook
          -- with nothing pending costs a claim nothing, however many there are.
          (SELECT webhook_id FROM deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
          UNION ALL
          SELECT (SELECT d.webhook_id FROM deliveries d WHERE d.status = 'pending' AND d.webhook_id > p.webhook_id
                  ORDER BY d.webhook_id LIMIT 1)
          FROM pending p WHERE p.webhook_id IS NOT NULL
        ), due AS MATERIALIZED (
          -- A LATERAL probe with LIMIT 1, one index lookup per webhook: written as EXISTS, the planner (trusting
          -- statistics that lag a fast-moving queue) hashes every due delivery (BENCHMARKS.md has the figures).
          SELECT w.webhook_id, w.rate_limit FROM pending p JOIN webhooks w ON w.webhook_id = p.webhook_id
          CROSS JOIN LATERAL (
            SELECT 1 FROM deliveries d
            WHERE d.webhook_id = w.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}::bigint
            LIMIT 1
          ) has_due
          WHERE w.enabled
          ORDER BY w.webhook_id <= ${this.#lastLead}, w.webhook_id
          LIMIT ${limit}::integer
        ), ordered AS MATERIALIZED (SELECT webhook_id, rate_limit FROM due ORDER BY hashtext(webhook_id), webhook_id)
        SELECT webhook_id, rate_limit,
          pg_advisory_xact_lock(${CLAIM_LOCK}::integer, hashtext(webhook_id))::text AS locked
        FROM ordered`;
      if (locked.length === 0) return [];
      const ids = locked.map((r) => r.webhook_id).sort();
      const lead = ids.find((id) => id > this.#lastLead) ?? ids[0];
      this.#lastLead = lead;
      // Each claim and outcome leaves a dead entry in deliveries_leased until vacuum. A bitmap scan visits the heap
      // for every one of them at each claim; a plain index scan marks them dead once and passes over them after.
      // Nor a sequential scan, which a plan prepared while the table was small (before its first ANALYZE) keeps.
      await sql`SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`;
      const leasedRows = await sql<{ webhook_id: string; leased: number }[]>`
        SELECT webhook_id, count(*)::integer AS leased FROM deliveries
        WHERE webhook_id = ANY(${ids}::text[]) AND lease_token IS NOT NULL AND next_attempt_at > ${now}::bigint
          AND NOT starts_with(lease_token, ${`${this.#db.leaseTokens.prefix}.`})
        GROUP BY webhook_id`;
      const leased = new Map(leasedRows.map((r) => [r.webhook_id, r.leased]));
      const rotated = [...ids.filter((id) => id >= lead), ...ids.filter((id) => id < lead)];
      let wanted = rotated
        .map((id) => [id, Math.min(room(id, leased.get(id) ?? 0), limit)] as const)
        .filter(([, n]) => n > 0);
      // Rate-limited webhooks get only the start slots within the horizon; the advisory lock makes their slot
      // state this transaction's, whichever process claims.
      const paced = await this.#pace(sql, locked, wanted, now);
      wanted = wanted
        .map(([id, n]) => [id, paced.get(id)?.slots.length ?? n] as const)
        .filter(([, n]) => n > 0);
      if (wanted.length === 0) return [];
      const token = this.#db.leaseTokens.next();
      const rows = await sql<ClaimRow[]>`
        WITH wanted AS (
          SELECT * FROM unnest(${wanted.map(([id]) => id)}::text[], ${wanted.map(([, n]) => n)}::integer[])
            WITH ORDINALITY AS t(webhook_id, n, o)
        ), picked AS (
          -- Round robin over the webhooks in rotation order: each one's oldest first, then each one's second...
          SELECT p.delivery_id FROM wanted CROSS JOIN LATERAL (
            SELECT x.delivery_id, row_number() OVER (ORDER BY x.next_attempt_at) AS k FROM (
              SELECT d.delivery_id, d.next_attempt_at FROM deliveries d
              WHERE d.webhook_id = wanted.webhook_id AND d.status = 'pending'
                AND d.next_attempt_at <= ${now}::bigint
              ORDER BY d.next_attempt_at LIMIT wanted.n
              FOR UPDATE SKIP LOCKED
            ) x
          ) p
          ORDER BY p.k, wanted.o LIMIT ${limit}::integer
        )
        UPDATE deliveries d SET next_attempt_at = ${now + leaseMs}::bigint, lease_token = ${token}
        FROM picked, webhooks w, events e
        WHERE d.delivery_id = picked.delivery_id AND w.webhook_id = d.webhook_id AND e.event_id = d.event_id
        RETURNING d.seq, d.delivery_id, d.event_id, d.instance_id, d.webhook_id, d.attempts, d.cycle_attempts,
          d.next_trigger, w.destination_url, w.destination_sealed, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_until,
          w.headers_sealed, w.rate_limit, w.standard_webhooks, e.body, e.trace_context`;
      // Slots go to a webhook's deliveries oldest first.
      rows.sort((a, b) => a.seq - b.seq);
      const taken = new Map<string, number>();
      const claims = rows.map((r): ClaimedDelivery => {
        const i = taken.get(r.webhook_id) ?? 0;
        taken.set(r.webhook_id, i + 1);
        const startAt = paced.get(r.webhook_id)?.slots[i] ?? 0;
        return claimOf(
          r,
          now,
          token,
          startAt,
          r.delivery_id,
          r.event_id,
          r.instance_id,
          r.attempts,
          r.cycle_attempts,
          r.next_trigger,
          r.body,
          r.trace_context,
        );
      });
      await this.#keepSlots(sql, paced, taken);
      // A full claim left due work for the next: the lead calls every worker (listener.ts), so that a backlog is
      // shared as before while a trickle is claimed once.
      if (rows.length === limit && this.#db.leading) await this.#db.notifyOverflow(sql);
      return claims;
    });
  }

  /** The start slots of the rate-limited webhooks among `locked` (domain/pacing.ts). */
  async nextDueAt(after: number): Promise<number | null> {
    // Leased deliveries are left out (deliveries_due holds none): a lease that runs out is found by the next
    // claim, which comes within the dispatcher's longest sleep.
    const [row] = await this.#db.sql<{ due: number | null }[]>`
      SELECT min(next_attempt_at) AS due FROM deliveries
      WHERE status = 'pending' AND lease_token IS NULL AND next_attempt_at > ${after}::bigint`;
    return row?.due ?? null;
  }

  async queueStats(now: number): Promise<QueueStats> {
    // A leased delivery's due time is the end of its lease, so "due" leaves out the ones in flight.
    const [row] = await this.#db.sql<QueueStats[]>`
      SELECT count(*)::integer AS pending,
        count(*) FILTER (WHERE next_attempt_at <= ${now}::bigint)::integer AS due,
        min(next_attempt_at) FILTER (WHERE next_attempt_at <= ${now}::bigint) AS oldest_due_at
      FROM deliveries WHERE status = 'pending'`;
    return row;
  }

  async #pace(
    sql: Tx,
    locked: { webhook_id: string; rate_limit: number | null }[],
    wanted: readonly (readonly [string, number])[],
    now: number,
  ): Promise<Map<string, ReturnType<typeof takeSlots>>> {
    const limited = new Map(
      locked.filter((w) => w.rate_limit !== null).map((w) => [w.webhook_id, w.rate_limit as number]),
    );
    const want = wanted.filter(([id]) => limited.has(id));
    if (want.length === 0) return new Map();
    const state = await sql<{ webhook_id: string; next_at: number }[]>`
      SELECT webhook_id, next_at FROM webhook_slots WHERE webhook_id = ANY(${want.map(([id]) => id)}::text[])`;
    const next = new Map(state.map((s) => [s.webhook_id, Number(s.next_at)]));
    return new Map(
      want.map(([id, n]) => [
        id,
        takeSlots(limited.get(id) as number, next.get(id) ?? 0, now, n, PACE_HORIZON_MS),
      ]),
    );
  }

  /** The next free slot of each paced webhook: after the slots its claims took (untaken ones stay free). */
  async #keepSlots(sql: Tx, paced: Map<string, ReturnType<typeof takeSlots>>, taken: Map<string, number>) {
    const kept = [...paced].flatMap(([id, p]) => {
      const n = taken.get(id) ?? 0;
      return n > 0 ? [[id, p.slots[n] ?? p.nextAt] as const] : [];
    });
    if (kept.length === 0) return;
    await sql`
      INSERT INTO webhook_slots (webhook_id, next_at)
      SELECT * FROM unnest(${kept.map(([id]) => id)}::text[], ${kept.map(([, at]) => at)}::double precision[])
      ON CONFLICT (webhook_id) DO UPDATE SET next_at = excluded.next_at`;
  }
}
