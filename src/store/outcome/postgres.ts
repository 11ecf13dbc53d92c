/**
 * Outcomes on PostgreSQL, shared by any number of processes: each attempt logged and counted, the decision applied
 * while the result's lease still holds the delivery (a late one only counted), a 410 disabling its webhook and ending
 * its pending work, health kept, and claims that never started given back. Each call is one transaction.
 */
import type postgres from 'postgres';
import { healthChanges } from '../../domain/health.ts';
import { disablesWebhook, healthInput, planOutcome } from '../../domain/store-rules.ts';
import { applyHealth } from '../health/postgres.ts';
import type { Outcomes } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';
import type { AttemptResult, ClaimedDelivery } from '../records.ts';
import { isLatest, lastResult } from '../rules.ts';
import { disableWebhook } from '../webhooks/postgres.ts';

export class PostgresOutcomes implements Outcomes {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    const gone = [
      ...new Set(results.filter((r) => disablesWebhook(r.decision)).map((r) => r.claim.webhook_id)),
    ].sort();
    await this.#db.tx(
      async (sql) => {
        // Webhooks to disable are locked first, so that two workers recording 410s of one webhook queue up
        // instead of deadlocking over each other's deliveries.
        if (gone.length > 0) {
          await sql`SELECT 1 FROM webhooks WHERE webhook_id = ANY(${gone}::text[]) ORDER BY webhook_id
                  FOR NO KEY UPDATE`;
        }
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
        await sql`
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
            RETURNING d.delivery_id
          )
          INSERT INTO attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error,
            response_body, next_attempt_at, next_attempt_reason)
          SELECT r.delivery_id, r.attempt, r.trigger, r.started_at, r.duration_ms, r.status_code, r.error,
            r.response_body, r.next_attempt_at, r.next_attempt_reason
          FROM r JOIN applied a ON a.delivery_id = r.delivery_id`;
        await applyHealth(sql, healthChanges(results.map(healthInput)));
        for (const webhookId of gone) await disableWebhook(sql, webhookId, 'gone', now);
      },
      { durable: false },
    );
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
