/**
 * Webhook health on PostgreSQL, read for the API and the page (outcome/postgres-health.ts keeps it), and a
 * webhook's attempts of a window for its stats.
 */
import { firstCountedHour, type WebhookHealth } from '../../domain/health.ts';
import type { LoggedAttempt } from '../../domain/webhook-stats.ts';
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
        COALESCE(sum(x.attempts), 0)::integer AS attempts_24h, COALESCE(sum(x.delivered), 0)::integer AS delivered_24h,
        COALESCE(sum(GREATEST(x.failed, 0)), 0)::integer AS failed_24h, COALESCE(sum(x.retried), 0)::integer AS retried_24h
      FROM webhook_health h JOIN webhooks w ON w.webhook_id = h.webhook_id
        LEFT JOIN webhook_hours x ON x.webhook_id = h.webhook_id AND x.hour >= ${firstCountedHour(now)}::bigint
      WHERE ${instanceId}::text IS NULL OR w.instance_id = ${instanceId}::text
      GROUP BY h.webhook_id, h.last_delivered_at, h.last_failed_at, h.consecutive_failures`;
    return new Map(rows.map(({ webhook_id, ...health }) => [webhook_id, health]));
  }

  async attemptsSince(webhookId: string, from: number): Promise<LoggedAttempt[]> {
    // The webhook's deliveries attempted since `from` (deliveries_webhook_attempted), then their attempts.
    const rows = await this.#db.sql<LoggedAttempt[]>`
      SELECT a.started_at::float8 AS started_at, a.duration_ms, a.status_code, a.error,
        a.next_attempt_at IS NOT NULL AS retried, a.started_at >= d.last_attempt_at AS last
      FROM deliveries d JOIN attempts a ON a.delivery_id = d.delivery_id
      WHERE d.webhook_id = ${webhookId}::text AND d.last_attempt_at >= ${from}::bigint
        AND a.started_at >= ${from}::bigint`;
    return rows;
  }
}
