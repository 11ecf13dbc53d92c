/**
 * Outcomes on PostgreSQL, shared by any number of processes: each attempt logged and counted, the decision applied
 * while the result's lease still holds the delivery (a late one only counted), a 410 disabling its webhook and ending
 * its pending work, health kept, what they did announced (operational events), and claims that never started given
 * back. Each call is one transaction.
 */
import type postgres from 'postgres';
import { type HealthChange, healthChanges } from '../../domain/health.ts';
import {
  deliveryFailed,
  type FailedDelivery,
  type FailingPolicy,
  failedTooLong,
  type StreakTurns,
  webhookFailing,
  webhookRecovered,
} from '../../domain/operational-events.ts';
import { disablesWebhook, healthInput, planOutcome } from '../../domain/store-rules.ts';
import { announce } from '../announce/postgres.ts';
import { applyHealth } from '../health/postgres.ts';
import type { Outcomes } from '../ports.ts';
import { promoteHeads } from '../postgres/chat-queues.ts';
import type { PostgresDatabase, Tx } from '../postgres/database.ts';
import type { AttemptResult, ClaimedDelivery } from '../records.ts';
import { inChatQueue, isLatest, lastResult } from '../sql-fragments.ts';
import { disableWebhook } from '../webhooks/postgres.ts';

export class PostgresOutcomes implements Outcomes {
  readonly #db: PostgresDatabase;
  readonly #failing: FailingPolicy;

  constructor(db: PostgresDatabase, failing: FailingPolicy) {
    this.#db = db;
    this.#failing = failing;
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    const gone = new Set(results.filter((r) => disablesWebhook(r.decision)).map((r) => r.claim.webhook_id));
    const changes = healthChanges(results.map(healthInput));
    await this.#db.tx(
      async (sql) => {
        // Webhooks to disable are locked first, so that two workers recording 410s of one webhook queue up
        // instead of deadlocking over each other's deliveries.
        const disabling = [...new Set([...gone, ...(await this.#failingTooLong(sql, changes, now))])].sort();
        if (disabling.length > 0) {
          await sql`SELECT 1 FROM webhooks WHERE webhook_id = ANY(${disabling}::text[]) ORDER BY webhook_id
                  FOR NO KEY UPDATE`;
        }
        const failed = await this.#failedByLease(sql, results);
        const rows = results.map(({ claim, outcome, decision }) => {
          const { attempt: a, delivery: d } = planOutcome(outcome, decision);
          return {
            delivery_id: claim.delivery_id,
            lease_token: claim.lease_token,
            attempt: claim.attempt,
            trigger: claim.trigger,
            started_at: a.started_at,
            duration_ms: a.duration_ms,
            status_code: a.status_code,
            error: a.error,
            response_body: a.response_body,
            next_attempt_at: a.next_attempt_at,
            next_attempt_reason: a.next_attempt_reason,
            status: d.status,
            failure_reason: d.failure_reason,
          };
        });
        rows.sort((a, b) => (a.delivery_id < b.delivery_id ? -1 : 1));
        const json = this.#db.sql.json(rows as unknown as postgres.JSONValue);
        // One statement applies and logs. `= ANY(ids)` lets the planner use the key's index instead of reading
        // the whole table to join it with the records. Attempts are logged on the deliveries the UPDATE returns,
        // which it holds locked until commit: a delivery deleted mid-attempt (its webhook or instance removed)
        // leaves nothing to log the attempt on, and one being deleted now is deleted with its attempts after this
        // commits (the schema has no foreign key to do either; migrations.ts). A result whose lease is gone (ended
        // by a disable, or run out and taken by another worker) still counts as an attempt made, and is the last
        // result if it is the latest, but decides nothing. The row is matched by its key alone and the lease
        // compared in SET: a disable committed while this waits for the row is then seen (the expressions are
        // re-read on the new row).
        const ids = rows.map((r) => r.delivery_id);
        const finished = await sql<{ webhook_id: string; chat: string }[]>`
          WITH r AS (
            SELECT * FROM jsonb_to_recordset(${json}) AS r(${sql.unsafe(RECORD_COLUMNS)})
          ), applied AS (
            UPDATE deliveries d SET attempts = d.attempts + 1,
              cycle_attempts = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN d.cycle_attempts + 1 ELSE d.cycle_attempts END,
              next_trigger = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN 'scheduled' ELSE d.next_trigger END,
              ${sql.unsafe(LAST_RESULT)},
              status = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN r.status ELSE d.status END,
              next_attempt_at = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN r.next_attempt_at ELSE d.next_attempt_at END,
              failure_reason = CASE WHEN ${sql.unsafe(LEASE_HOLDS)} THEN r.failure_reason ELSE d.failure_reason END,
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
          -- Finished deliveries in a chat's queue let the next one go (a late result's is a harmless no-op).
          SELECT a.webhook_id, a.chat FROM applied a WHERE a.status <> 'pending' AND ${sql.unsafe(inChatQueue('a'))}`;
        // The next of each chat is due now: the workers are woken for it, as no claim or retry would wake them.
        if (
          finished.length > 0 &&
          (await promoteHeads(
            sql,
            finished.map((f) => ({ ...f, now })),
          )) > 0
        ) {
          await this.#db.notifyWork(sql);
        }
        const turns = await applyHealth(sql, changes, this.#failing, now);
        for (const webhookId of [...gone].sort()) await disableWebhook(this.#db, sql, webhookId, 'gone', now);
        for (const webhookId of turns.failedTooLong.filter((id) => disabling.includes(id))) {
          await disableWebhook(this.#db, sql, webhookId, 'failing', now);
        }
        await this.#announce(sql, failed, turns, now);
      },
      { durable: false },
    );
  }

  /**
   * Webhooks this batch may disable for failing too long, read before any lock so that they are locked in the same
   * order as 410s' (one read a moment stale only lets the next failure disable it).
   */
  async #failingTooLong(sql: Tx, changes: HealthChange[], now: number): Promise<string[]> {
    const afterMs = this.#failing.disableAfterFailingMs;
    const failing = changes
      .filter((c) => c.last_delivered_at === null && c.failures > 0)
      .map((c) => c.webhook_id);
    if (afterMs === null || failing.length === 0) return [];
    const rows = await sql<{ webhook_id: string; failing_since: number | null }[]>`
      SELECT h.webhook_id, h.failing_since FROM webhook_health h JOIN webhooks w ON w.webhook_id = h.webhook_id
      WHERE h.webhook_id = ANY(${failing}::text[]) AND w.enabled AND h.consecutive_failures > 0`;
    return rows.filter((r) => failedTooLong(r.failing_since, now, afterMs)).map((r) => r.webhook_id);
  }

  /**
   * The deliveries this batch fails while its lease holds them: locked (in key order) before the update, so that
   * what is read here is what the update then finds, and each failed delivery is announced by one writer only.
   */
  async #failedByLease(sql: Tx, results: AttemptResult[]): Promise<string[]> {
    const failing = results.filter((r) => r.decision.kind === 'failed');
    if (failing.length === 0) return [];
    const held = await sql<{ delivery_id: string; lease_token: string | null }[]>`
      SELECT delivery_id, lease_token FROM deliveries
      WHERE delivery_id = ANY(${failing.map((r) => r.claim.delivery_id)}::text[]) ORDER BY delivery_id FOR UPDATE`;
    const token = new Map(held.map((d) => [d.delivery_id, d.lease_token]));
    return failing
      .filter((r) => token.get(r.claim.delivery_id) === r.claim.lease_token)
      .map((r) => r.claim.delivery_id);
  }

  async #announce(sql: Tx, failed: string[], turns: StreakTurns, now: number): Promise<void> {
    if (failed.length > 0) {
      const rows = await sql<FailedDelivery[]>`
        SELECT delivery_id, event_id, event, instance_id, webhook_id, failure_reason, last_status_code, last_error
        FROM deliveries WHERE delivery_id = ANY(${failed}::text[]) ORDER BY delivery_id`;
      for (const d of rows) await announce(this.#db, sql, d.webhook_id, () => deliveryFailed(d, now), now);
    }
    for (const r of turns.recovered) {
      await announce(this.#db, sql, r.webhook_id, (w) => webhookRecovered(w, r.after_failures, now), now);
    }
    for (const f of turns.failing) {
      await announce(this.#db, sql, f.webhook_id, (w) => webhookFailing(w, f, now), now);
    }
  }

  /** Only a delivery still held by that very lease is given back; other workers are woken to take it at once. */
  async releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number) {
    if (claims.length === 0) return 0;
    const ids = claims.map((c) => c.delivery_id);
    return this.#db.tx(async (sql) => {
      const result = await sql`
        UPDATE deliveries d SET next_attempt_at = ${now}::bigint, lease_token = NULL
        FROM unnest(${ids}::text[], ${claims.map((c) => c.lease_token)}::text[]) AS c(delivery_id, lease_token)
        WHERE d.delivery_id = ANY(${ids}::text[]) AND d.delivery_id = c.delivery_id
          AND d.lease_token = c.lease_token AND d.status = 'pending'`;
      if (result.count > 0) await this.#db.notifyWork(sql);
      return result.count;
    });
  }
}

/** The result's lease still holds the delivery: its decision applies. */
const LEASE_HOLDS = 'COALESCE(d.lease_token = r.lease_token, false)';
/** The result's lease holds, or it is the latest: the delivery's last result becomes this one. */
const LAST_RESULT = lastResult(`${LEASE_HOLDS} OR ${isLatest('r.started_at')}`, {
  started_at: 'r.started_at',
  status_code: 'r.status_code',
  error: 'r.error',
});

const RECORD_COLUMNS = `delivery_id text, lease_token text, attempt integer, trigger text, started_at bigint,
  duration_ms integer, status_code integer, error text, response_body text, next_attempt_at bigint,
  next_attempt_reason text, status text, failure_reason text`;
