/** Webhook health on SQLite: kept as outcomes are recorded (outcome/sqlite.ts), read for the API and the page. */
import { firstCountedHour, type HealthChange, type WebhookHealth } from '../../domain/health.ts';
import {
  type FailingPolicy,
  type Streak,
  type StreakTurns,
  streakTurns,
} from '../../domain/operational-events.ts';
import type { Health } from '../ports.ts';
import { FAILURES_IN_A_ROW } from '../sql-fragments.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteHealth implements Health {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async webhookHealth(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>> {
    const rows = this.#db
      .q(
        `SELECT h.webhook_id, h.last_delivered_at, h.last_failed_at, h.consecutive_failures,
           COALESCE((SELECT SUM(attempts) FROM webhook_hours x WHERE x.webhook_id = h.webhook_id AND x.hour >= ?1), 0) AS attempts_24h,
           COALESCE((SELECT SUM(delivered) FROM webhook_hours x WHERE x.webhook_id = h.webhook_id AND x.hour >= ?1), 0) AS delivered_24h
         FROM webhook_health h JOIN webhooks w ON w.webhook_id = h.webhook_id
         WHERE ?2 IS NULL OR w.instance_id = ?2`,
      )
      .all(firstCountedHour(now), instanceId);
    return new Map(
      rows.map((r) => [
        r.webhook_id as string,
        {
          last_delivered_at: r.last_delivered_at as number | null,
          last_failed_at: r.last_failed_at as number | null,
          consecutive_failures: Number(r.consecutive_failures),
          attempts_24h: Number(r.attempts_24h),
          delivered_24h: Number(r.delivered_24h),
        },
      ]),
    );
  }
}

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
    `INSERT INTO webhook_hours (webhook_id, hour, attempts, delivered) SELECT ?1, ?2, ?3, ?4
     WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhook_id = ?1)
     ON CONFLICT (webhook_id, hour) DO UPDATE SET attempts = attempts + excluded.attempts,
       delivered = delivered + excluded.delivered`,
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
    for (const h of c.hours) hour.run(c.webhook_id, h.hour, h.attempts, h.delivered);
    const row = health.get(c.webhook_id, c.last_delivered_at, c.last_failed_at, c.failures, c.failing_since);
    if (row) after.set(c.webhook_id, row as unknown as Streak);
    old.run(c.webhook_id, firstCountedHour(Math.max(...c.hours.map((h) => h.hour))));
  }
  const turns = streakTurns(changes, before, after, policy, now);
  const announced = db.q('UPDATE webhook_health SET failing_announced_at = ? WHERE webhook_id = ?');
  for (const f of turns.failing) announced.run(now, f.webhook_id);
  return turns;
}
