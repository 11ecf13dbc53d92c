/** Webhook health on SQLite, kept as outcomes are recorded (sqlite.ts beside this); health/ reads it. */
import { firstCountedHour, type HealthChange } from '../../domain/health.ts';
import {
  type FailingPolicy,
  type Streak,
  type StreakTurns,
  streakTurns,
} from '../../domain/operational-events.ts';
import { FAILURES_IN_A_ROW } from '../sql-fragments.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

/**
 * Called inside the outcome writer's transaction: adds the batch's changes, and returns what they did to streaks of
 * failures, a webhook.failing marked as announced as it is returned, so that each is announced once.
 */
export function applyHealth(
  db: SqliteDatabase,
  changes: readonly HealthChange[],
  policy: FailingPolicy,
  now: number,
): StreakTurns {
  const read = db.q(
    'SELECT consecutive_failures, failing_since, failing_announced_at FROM webhook_health WHERE webhook_id = ?',
  );
  const before = new Map<string, Streak>();
  for (const c of changes) {
    const row = read.get(c.webhook_id);
    if (row) before.set(c.webhook_id, row as unknown as Streak);
  }
  const hour = db.q(
    `INSERT INTO webhook_hours (webhook_id, hour, attempts, delivered, failed, retried) SELECT ?1, ?2, ?3, ?4, ?5, ?6
     WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhook_id = ?1)
     ON CONFLICT (webhook_id, hour) DO UPDATE SET attempts = attempts + excluded.attempts,
       delivered = delivered + excluded.delivered, failed = failed + excluded.failed,
       retried = retried + excluded.retried`,
  );
  const health = db.q(
    `INSERT INTO webhook_health (webhook_id, last_delivered_at, last_failed_at, consecutive_failures, failing_since)
     SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhook_id = ?1)
     ON CONFLICT (webhook_id) DO UPDATE SET
       last_delivered_at = COALESCE(MAX(last_delivered_at, excluded.last_delivered_at), last_delivered_at, excluded.last_delivered_at),
       last_failed_at = COALESCE(MAX(last_failed_at, excluded.last_failed_at), last_failed_at, excluded.last_failed_at),
       ${FAILURES_IN_A_ROW}
     RETURNING consecutive_failures, failing_since, failing_announced_at`,
  );
  // Hours no view counts any more go as the webhook's next ones come: the table stays a day's worth per webhook.
  const old = db.q('DELETE FROM webhook_hours WHERE webhook_id = ? AND hour < ?');
  const after = new Map<string, Streak>();
  for (const c of changes) {
    for (const h of c.hours) hour.run(c.webhook_id, h.hour, h.attempts, h.delivered, h.failed, h.retried);
    const row = health.get(c.webhook_id, c.last_delivered_at, c.last_failed_at, c.failures, c.failing_since);
    if (row) after.set(c.webhook_id, row as unknown as Streak);
    old.run(c.webhook_id, firstCountedHour(Math.max(...c.hours.map((h) => h.hour))));
  }
  const turns = streakTurns(changes, before, after, policy, now);
  const announced = db.q('UPDATE webhook_health SET failing_announced_at = ? WHERE webhook_id = ?');
  for (const f of turns.failing) announced.run(now, f.webhook_id);
  return turns;
}
