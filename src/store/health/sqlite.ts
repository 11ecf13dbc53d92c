/**
 * Webhook health on SQLite, read for the API and the page (outcome/sqlite-health.ts keeps it), and a webhook's
 * attempts of a window for its stats.
 */
import { firstCountedHour, type WebhookHealth } from '../../domain/health.ts';
import type { LoggedAttempt } from '../../domain/webhook-stats.ts';
import type { Health } from '../ports.ts';
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
           COALESCE((SELECT SUM(delivered) FROM webhook_hours x WHERE x.webhook_id = h.webhook_id AND x.hour >= ?1), 0) AS delivered_24h,
           COALESCE((SELECT SUM(MAX(failed, 0)) FROM webhook_hours x WHERE x.webhook_id = h.webhook_id AND x.hour >= ?1), 0) AS failed_24h,
           COALESCE((SELECT SUM(retried) FROM webhook_hours x WHERE x.webhook_id = h.webhook_id AND x.hour >= ?1), 0) AS retried_24h
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
          failed_24h: Number(r.failed_24h),
          retried_24h: Number(r.retried_24h),
        },
      ]),
    );
  }

  async attemptsSince(webhookId: string, from: number): Promise<LoggedAttempt[]> {
    // The webhook's deliveries attempted since `from` (deliveries_webhook_attempted), then their attempts.
    const rows = this.#db
      .q(
        `SELECT a.started_at, a.duration_ms, a.status_code, a.error, a.next_attempt_at IS NOT NULL AS retried,
           a.started_at >= d.last_attempt_at AS last
         FROM deliveries d JOIN attempts a ON a.delivery_id = d.delivery_id
         WHERE d.webhook_id = ?1 AND d.last_attempt_at >= ?2 AND a.started_at >= ?2`,
      )
      .all(webhookId, from);
    return rows.map((r) => ({
      started_at: Number(r.started_at),
      duration_ms: Number(r.duration_ms),
      status_code: r.status_code === null ? null : Number(r.status_code),
      error: r.error as string | null,
      retried: Number(r.retried) === 1,
      last: Number(r.last) === 1,
    }));
  }
}
