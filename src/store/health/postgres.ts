/** Webhook health on PostgreSQL, read for the API and the page (outcome/postgres-health.ts keeps it). */
import { firstCountedHour, type WebhookHealth } from '../../domain/health.ts';
import type { Health } from '../ports.ts';
import type { PostgresDatabase } from '../postgres/database.ts';

export class PostgresHealth implements Health {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async webhookHealth(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>> {
    const rows = await this.#db.sql<(WebhookHealth & { webhook_id: string })[]>`
      SELECT h.webhook_id, h.last_delivered_at, h.last_failed_at, h.consecutive_failures,
        COALESCE(sum(x.attempts), 0)::integer AS attempts_24h, COALESCE(sum(x.delivered), 0)::integer AS delivered_24h
      FROM webhook_health h JOIN webhooks w ON w.webhook_id = h.webhook_id
        LEFT JOIN webhook_hours x ON x.webhook_id = h.webhook_id AND x.hour >= ${firstCountedHour(now)}::bigint
      WHERE ${instanceId}::text IS NULL OR w.instance_id = ${instanceId}::text
      GROUP BY h.webhook_id, h.last_delivered_at, h.last_failed_at, h.consecutive_failures`;
    return new Map(rows.map(({ webhook_id, ...health }) => [webhook_id, health]));
  }
}
