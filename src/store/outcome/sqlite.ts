/**
 * Outcomes on SQLite: each attempt logged and counted; the decision applied while the lease still holds, a late one
 * (its lease ended by a disable or run out) only counted; a 410 disabling its webhook; health kept; what they did
 * announced (operational events); and claims that never started given back.
 */
import { healthChanges } from '../../domain/health.ts';
import {
  deliveryFailed,
  type FailedDelivery,
  type FailingPolicy,
  type StreakTurns,
  webhookFailing,
  webhookRecovered,
} from '../../domain/operational-events.ts';
import { disablesWebhook, healthInput, planOutcome } from '../../domain/store-rules.ts';
import { announce } from '../announce/sqlite.ts';
import { applyHealth } from '../health/sqlite.ts';
import type { Outcomes } from '../ports.ts';
import type { AttemptResult, ClaimedDelivery } from '../records.ts';
import { IN_CHAT_QUEUE, isLatest, lastResult, PROMOTE_HEAD } from '../sql-fragments.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';
import type { Leases } from '../sqlite/leases.ts';
import { disableWebhook } from '../webhooks/sqlite.ts';

export class SqliteOutcomes implements Outcomes {
  readonly #db: SqliteDatabase;
  readonly #leases: Leases;
  readonly #failing: FailingPolicy;

  constructor(db: SqliteDatabase, leases: Leases, failing: FailingPolicy) {
    this.#db = db;
    this.#leases = leases;
    this.#failing = failing;
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
           ${lastResult(isLatest('?1'), { started_at: '?1', status_code: '?2', error: '?3' })}
         WHERE delivery_id = ?4`,
      );
      const apply = this.#db.q(
        `UPDATE deliveries SET attempts = attempts + 1, cycle_attempts = cycle_attempts + 1, next_trigger = 'scheduled',
           last_attempt_at = ?, last_status_code = ?, last_error = ?, status = ?, next_attempt_at = ?, failure_reason = ?
         WHERE seq = ?`,
      );
      const failed: number[] = [];
      const finished: number[] = [];
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
          if (d.status === 'failed') failed.push(lease.seq);
          if (d.status !== 'pending') finished.push(lease.seq);
        } else {
          late.run(d.last_attempt_at, d.last_status_code, d.last_error, claim.delivery_id);
        }
        if (disablesWebhook(decision)) disableWebhook(this.#db, this.#leases, claim.webhook_id, 'gone', now);
      }
      this.#nextInChats(finished, now);
      const turns = applyHealth(this.#db, healthChanges(results.map(healthInput)), this.#failing, now);
      this.#announce(failed, turns, now);
    }, 'lazy');
  }

  /**
   * A finished delivery in a chat's queue lets the next one go (sql-fragments.ts), and wakes the dispatcher for it: nothing
   * else would until its next round (a lone chat went at one delivery a second without it).
   */
  #nextInChats(finished: number[], now: number): void {
    const chat = this.#db.q(`SELECT webhook_id, chat FROM deliveries WHERE seq = ? AND ${IN_CHAT_QUEUE}`);
    const promote = this.#db.q(PROMOTE_HEAD('?1', '?2', '?3'));
    let promoted = 0;
    for (const seq of finished) {
      const c = chat.get(seq);
      if (c) promoted += Number(promote.run(now, c.webhook_id, c.chat).changes);
    }
    if (promoted > 0) this.#db.notifyWork();
  }

  /** Failed deliveries and streaks' turns, announced in the transaction that made them. */
  #announce(failed: number[], turns: StreakTurns, now: number): void {
    const delivery = this.#db.q(
      `SELECT delivery_id, event_id, event, instance_id, webhook_id, failure_reason, last_status_code, last_error
       FROM deliveries WHERE seq = ?`,
    );
    for (const seq of failed) {
      const d = delivery.get(seq) as unknown as FailedDelivery | undefined;
      if (d) announce(this.#db, d.webhook_id, () => deliveryFailed(d, now), now);
    }
    for (const r of turns.recovered) {
      announce(this.#db, r.webhook_id, (w) => webhookRecovered(w, r.after_failures, now), now);
    }
    for (const f of turns.failing) announce(this.#db, f.webhook_id, (w) => webhookFailing(w, f, now), now);
    for (const id of turns.failedTooLong) disableWebhook(this.#db, this.#leases, id, 'failing', now);
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
}
