/**
 * Outcomes on SQLite: each attempt logged and counted; the decision applied while the lease still holds, a late one
 * (its lease ended by a disable or run out) only counted; a 410 disabling its webhook; health kept; what they did
 * announced (operational events); and claims that never started given back.
 */
import { healthChanges, type PreviousAttempt, previousAttempt } from '../../domain/health.ts';
import {
  deliveryFailed,
  type FailedDelivery,
  type FailingPolicy,
  type StreakTurns,
  webhookFailing,
  webhookRecovered,
} from '../../domain/operational-events.ts';
import { disablesWebhook, healthInput, planOutcome } from '../../domain/store-rules.ts';
import type { Outcomes } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { SqliteQueue } from '../queue/sqlite.ts';
import type { AttemptResult, ClaimedDelivery } from '../records.ts';
import { isLatest, lastResult } from '../sql-fragments.ts';
import { applyHealth } from './sqlite-health.ts';

export class SqliteOutcomes extends QueueOperation<SqliteQueue> implements Outcomes {
  readonly #failing: FailingPolicy;

  constructor(queue: SqliteQueue, failing: FailingPolicy) {
    super(queue);
    this.#failing = failing;
  }

  async recordAttempts(results: AttemptResult[], now: number): Promise<void> {
    if (results.length === 0) return;
    this.db.tx(() => {
      // A delivery deleted mid-attempt (its webhook or instance removed) leaves nothing to log the attempt on.
      const log = this.db.q(
        `INSERT INTO attempts (delivery_id, attempt, trigger, started_at, duration_ms, status_code, error, response_body,
          next_attempt_at, next_attempt_reason)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM deliveries WHERE delivery_id = ?1)`,
      );
      // A result whose lease was lost is counted, and is the last result if it is the latest, but decides nothing.
      const late = this.db.q(
        `UPDATE deliveries SET attempts = attempts + 1,
           ${lastResult(isLatest('?1'), { started_at: '?1', status_code: '?2', error: '?3' })}
         WHERE delivery_id = ?4`,
      );
      // The delivery's attempt before this one, read before this one is logged: the health counts it as retried.
      const before = this.db.q(
        'SELECT started_at, duration_ms, next_attempt_at FROM attempts WHERE delivery_id = ? ORDER BY started_at DESC LIMIT 1',
      );
      const previous: (PreviousAttempt | null)[] = [];
      const failed: number[] = [];
      const finished: number[] = [];
      for (const { claim, outcome, decision } of results) {
        const { attempt: a, delivery: d } = planOutcome(outcome, decision);
        // A delivery's first attempt has none before it: no read on the path most attempts take.
        previous.push(claim.attempt > 1 ? previousAttempt(before.get(claim.delivery_id) as never) : null);
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
        const seq = this.queue.finish(claim, d);
        if (seq !== null) {
          if (d.status === 'failed') failed.push(seq);
          if (d.status !== 'pending') finished.push(seq);
        } else {
          late.run(d.last_attempt_at, d.last_status_code, d.last_error, claim.delivery_id);
        }
        if (disablesWebhook(decision)) this.queue.endForWebhook(claim.webhook_id, 'gone', now);
      }
      // A finished delivery in a chat's queue lets the next one go: nothing else would wake the dispatcher for it
      // until its next round (a lone chat went at one delivery a second without it).
      this.queue.advanceFinished(finished, now);
      const changes = healthChanges(results.map((r, i) => healthInput(r, previous[i])));
      const turns = applyHealth(this.db, changes, this.#failing, now);
      this.#announce(failed, turns, now);
    }, 'lazy');
  }

  /** Failed deliveries and streaks' turns, announced in the transaction that made them. */
  #announce(failed: number[], turns: StreakTurns, now: number): void {
    const delivery = this.db.q(
      `SELECT delivery_id, event_id, event, instance_id, webhook_id, failure_reason, last_status_code, last_error
       FROM deliveries WHERE seq = ?`,
    );
    for (const seq of failed) {
      const d = delivery.get(seq) as unknown as FailedDelivery | undefined;
      if (d) this.queue.announce(d.webhook_id, () => deliveryFailed(d, now), now);
    }
    for (const r of turns.recovered) {
      this.queue.announce(r.webhook_id, (w) => webhookRecovered(w, r.after_failures, now), now);
    }
    for (const f of turns.failing) this.queue.announce(f.webhook_id, (w) => webhookFailing(w, f, now), now);
    for (const id of turns.failedTooLong) this.queue.endForWebhook(id, 'failing', now);
  }

  async releaseClaims(claims: Pick<ClaimedDelivery, 'delivery_id' | 'lease_token'>[], now: number) {
    if (claims.length === 0) return 0;
    return this.db.tx(() => this.queue.requeueClaims(claims, now));
  }
}
