/** Webhook health on SQLite, read for the API and the page (outcome/sqlite-health.ts keeps it). */
import { firstCountedHour, type WebhookHealth } from '../../domain/health.ts';
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
