/**
 * Outcomes on PostgreSQL, shared by any number of processes: each attempt logged and counted, the decision applied
 * while the result's lease still holds the delivery (a late one only counted), a 410 disabling its webhook and ending
 * its pending work, health kept, what they did announced (operational events), and claims that never started given
 * back. Each call is one transaction.
 */
import { type HealthChange, healthChanges, previousAttempt } from '../../domain/health.ts';
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
import type { Outcomes } from '../ports.ts';
import type { Tx } from '../postgres/database.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { FinishRow, PostgresQueue } from '../queue/postgres.ts';
import type { AttemptResult, ClaimedDelivery } from '../records.ts';
import { applyHealth } from './postgres-health.ts';

export class PostgresOutcomes extends QueueOperation<PostgresQueue> implements Outcomes {
  readonly #failing: FailingPolicy;

  constructor(queue: PostgresQueue, failing: FailingPolicy) {
    super(queue);
    this.#failing = failing;
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    const gone = new Set(results.filter((r) => disablesWebhook(r.decision)).map((r) => r.claim.webhook_id));
    // The streaks need no attempt before; the hours do, read in the transaction before this batch is logged.
    const streaks = healthChanges(results.map((r) => healthInput(r)));
    await this.db.tx(
      async (sql) => {
        // Webhooks to disable are locked first, so that two workers recording 410s of one webhook queue up
        // instead of deadlocking over each other's deliveries.
        const disabling = [...new Set([...gone, ...(await this.#failingTooLong(sql, streaks, now))])].sort();
        if (disabling.length > 0) {
          await sql`SELECT 1 FROM webhooks WHERE webhook_id = ANY(${disabling}::text[]) ORDER BY webhook_id
                  FOR NO KEY UPDATE`;
        }
        const failed = await this.#failedByLease(sql, results);
        const changes = await this.#withPrevious(sql, results);
        const rows = results.map(({ claim, outcome, decision }): FinishRow => {
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
        await this.queue.finish(sql, rows, now);
        const turns = await applyHealth(sql, changes, this.#failing, now);
        for (const webhookId of [...gone].sort()) await this.queue.endForWebhook(sql, webhookId, 'gone', now);
        for (const webhookId of turns.failedTooLong.filter((id) => disabling.includes(id))) {
          await this.queue.endForWebhook(sql, webhookId, 'failing', now);
        }
        await this.#announce(sql, failed, turns, now);
      },
      { durable: false },
    );
  }

  /** The batch's health, with each delivery's attempt before this one (read before this one is logged). */
  async #withPrevious(sql: Tx, results: AttemptResult[]): Promise<HealthChange[]> {
    // A delivery's first attempt has none before it: no read for a batch of first attempts, the usual one.
    const ids = [...new Set(results.filter((r) => r.claim.attempt > 1).map((r) => r.claim.delivery_id))];
    const rows =
      ids.length === 0
        ? []
        : await sql<
            { delivery_id: string; started_at: number; duration_ms: number; next_attempt_at: number | null }[]
          >`
      SELECT DISTINCT ON (delivery_id) delivery_id, started_at, duration_ms, next_attempt_at FROM attempts
      WHERE delivery_id = ANY(${ids}::text[]) ORDER BY delivery_id, started_at DESC`;
    const before = new Map(rows.map((r) => [r.delivery_id, r]));
    return healthChanges(
      results.map((r) => healthInput(r, previousAttempt(before.get(r.claim.delivery_id)))),
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
      for (const d of rows) await this.queue.announce(sql, d.webhook_id, () => deliveryFailed(d, now), now);
    }
    for (const r of turns.recovered) {
      await this.queue.announce(sql, r.webhook_id, (w) => webhookRecovered(w, r.after_failures, now), now);
    }
    for (const f of turns.failing) {
      await this.queue.announce(sql, f.webhook_id, (w) => webhookFailing(w, f, now), now);
    }
  }

  /** Only a delivery still held by that very lease is given back; other workers are woken to take it at once. */
  async releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number) {
    if (claims.length === 0) return 0;
    return this.db.tx((sql) => this.queue.requeueClaims(sql, claims, now));
  }
}
