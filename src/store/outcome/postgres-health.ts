/** Webhook health on PostgreSQL, kept as outcomes are recorded (postgres.ts beside this); health/ reads it. */
import { firstCountedHour, type HealthChange } from '../../domain/health.ts';
import {
  type FailingPolicy,
  type Streak,
  type StreakTurns,
  streakTurns,
} from '../../domain/operational-events.ts';
import type { Tx } from '../postgres/database.ts';
import { FAILURES_IN_A_ROW } from '../sql-fragments.ts';

/**
 * Inside the outcome writer's transaction; rows of their own, so ingest's lock on webhooks never waits. Returns what
 * the batch did to streaks of failures (as SQLite's does), read under the rows' locks, taken in key order so that
 * two writers of the same webhooks queue up instead of deadlocking.
 */
export async function applyHealth(
  sql: Tx,
  changes: readonly HealthChange[],
  policy: FailingPolicy,
  now: number,
): Promise<StreakTurns> {
  const none: StreakTurns = { recovered: [], failing: [], failedTooLong: [] };
  if (changes.length === 0) return none;
  const hours = changes.flatMap((c) => c.hours.map((h) => ({ webhook_id: c.webhook_id, ...h })));
  await sql`
    INSERT INTO webhook_hours (webhook_id, hour, attempts, delivered, failed, retried)
    SELECT h.webhook_id, h.hour, h.attempts, h.delivered, h.failed, h.retried
    FROM unnest(${hours.map((h) => h.webhook_id)}::text[], ${hours.map((h) => h.hour)}::bigint[],
                ${hours.map((h) => h.attempts)}::integer[], ${hours.map((h) => h.delivered)}::integer[],
                ${hours.map((h) => h.failed)}::integer[], ${hours.map((h) => h.retried)}::integer[])
         AS h(webhook_id, hour, attempts, delivered, failed, retried)
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.webhook_id = h.webhook_id)
    ORDER BY h.webhook_id, h.hour
    ON CONFLICT (webhook_id, hour) DO UPDATE SET attempts = webhook_hours.attempts + excluded.attempts,
      delivered = webhook_hours.delivered + excluded.delivered, failed = webhook_hours.failed + excluded.failed,
      retried = webhook_hours.retried + excluded.retried`;
  const sorted = [...changes].sort((a, b) => (a.webhook_id < b.webhook_id ? -1 : 1));
  const ids = sorted.map((c) => c.webhook_id);
  const before = await sql<(Streak & { webhook_id: string })[]>`
    SELECT webhook_id, consecutive_failures, failing_since, failing_announced_at FROM webhook_health
    WHERE webhook_id = ANY(${ids}::text[]) ORDER BY webhook_id FOR UPDATE`;
  const after = await sql<(Streak & { webhook_id: string })[]>`
    INSERT INTO webhook_health (webhook_id, last_delivered_at, last_failed_at, consecutive_failures, failing_since)
    SELECT c.webhook_id, c.delivered_at, c.failed_at, c.failures, c.failing_since
    FROM unnest(${ids}::text[], ${sorted.map((c) => c.last_delivered_at)}::bigint[],
                ${sorted.map((c) => c.last_failed_at)}::bigint[], ${sorted.map((c) => c.failures)}::integer[],
                ${sorted.map((c) => c.failing_since)}::bigint[])
         AS c(webhook_id, delivered_at, failed_at, failures, failing_since)
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.webhook_id = c.webhook_id)
    ON CONFLICT (webhook_id) DO UPDATE SET
      last_delivered_at = GREATEST(webhook_health.last_delivered_at, excluded.last_delivered_at),
      last_failed_at = GREATEST(webhook_health.last_failed_at, excluded.last_failed_at),
      ${sql.unsafe(FAILURES_IN_A_ROW)}
    RETURNING webhook_id, consecutive_failures, failing_since, failing_announced_at`;
  // Hours no view counts any more go as the webhook's next ones come: a day's worth per webhook.
  const oldest = sorted.map((c) => firstCountedHour(Math.max(...c.hours.map((h) => h.hour))));
  await sql`
    DELETE FROM webhook_hours h USING unnest(${ids}::text[], ${oldest}::bigint[]) AS o(webhook_id, before)
    WHERE h.webhook_id = o.webhook_id AND h.hour < o.before`;
  const byId = (rows: (Streak & { webhook_id: string })[]) =>
    new Map(rows.map(({ webhook_id, ...streak }) => [webhook_id, streak]));
  const turns = streakTurns(changes, byId(before), byId(after), policy, now);
  if (turns.failing.length > 0) {
    await sql`
      UPDATE webhook_health SET failing_announced_at = ${now}::bigint
      WHERE webhook_id = ANY(${turns.failing.map((f) => f.webhook_id)}::text[])`;
  }
  return turns;
}
