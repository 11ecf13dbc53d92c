/** Webhooks on PostgreSQL: their configuration, enablement, secret rotation and health. */
import type { Row } from 'postgres';
import { firstCountedHour, type HealthChange, type WebhookHealth } from '../../domain/health.ts';
import type { Webhook } from '../../domain/types.ts';
import { toWebhook } from '../rows.ts';
import type { WebhookConfig } from '../store.ts';
import type { PostgresDatabase, Tx } from './database.ts';

/** Ends a webhook's pending work when it is disabled (queue.ts). */
type Disable = (sql: Tx, webhookId: string, reason: string, now: number) => Promise<void>;

export class PostgresWebhooks {
  readonly #db: PostgresDatabase;
  readonly #disable: Disable;

  constructor(db: PostgresDatabase, disable: Disable) {
    this.#db = db;
    this.#disable = disable;
  }

  /**
   * The instance's row is locked before the count: creates for one instance, from every process on the database,
   * take turns. The count is a statement of its own, so that its snapshot is taken once the lock is held. FOR NO KEY
   * UPDATE leaves ingest alone (its foreign keys only take a key share).
   */
  async create(w: Webhook, maxPerInstance = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.#db.tx(async (sql) => {
      await sql`SELECT 1 FROM instances WHERE instance_id = ${w.instance_id} FOR NO KEY UPDATE`;
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::integer AS n FROM webhooks WHERE instance_id = ${w.instance_id}`;
      if ((row?.n ?? 0) >= maxPerInstance) return false;
      await sql`
        INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
          disabled_reason, disabled_at, created_at, updated_at, filter, headers_sealed, rate_limit)
        VALUES (${w.webhook_id}, ${w.instance_id}, ${w.destination_url}, ${JSON.stringify(w.events)},
          ${w.ignore_status}, ${w.enabled}, ${w.secret_sealed}, ${w.disabled_reason}, ${w.disabled_at}::bigint,
          ${w.created_at}::bigint, ${w.updated_at}::bigint, ${w.filter ? JSON.stringify(w.filter) : null},
          ${w.headers_sealed ?? null}, ${w.rate_limit ?? null}::integer)`;
      return true;
    });
  }

  async list(instanceId: string): Promise<Webhook[]> {
    const rows = await this.#db.sql<Row[]>`
      SELECT * FROM webhooks WHERE instance_id = ${instanceId} ORDER BY created_at, webhook_id`;
    return rows.map(toWebhook);
  }

  async get(instanceId: string, webhookId: string): Promise<Webhook | null> {
    const [row] = await this.#db.sql<Row[]>`
      SELECT * FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}`;
    return row ? toWebhook(row) : null;
  }

  async update(
    instanceId: string,
    webhookId: string,
    c: WebhookConfig,
    now: number,
  ): Promise<Webhook | null> {
    const keep = c.secret.kind === 'keep';
    const sealed = c.secret.kind === 'set' ? c.secret.sealed : null;
    // A secret set or cleared ends the grace of a rotated-out one.
    const [row] = await this.#db.sql<Row[]>`
      UPDATE webhooks SET destination_url = ${c.destination_url}, events = ${JSON.stringify(c.events)},
        ignore_status = ${c.ignore_status}, updated_at = ${now}::bigint,
        filter = ${c.filter ? JSON.stringify(c.filter) : null}, headers_sealed = ${c.headers_sealed},
        rate_limit = ${c.rate_limit}::integer,
        secret_sealed = CASE WHEN ${keep}::boolean THEN secret_sealed ELSE ${sealed}::text END,
        previous_secret_sealed = CASE WHEN ${keep}::boolean THEN previous_secret_sealed END,
        previous_secret_until = CASE WHEN ${keep}::boolean THEN previous_secret_until END
      WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
      RETURNING *`;
    return row ? toWebhook(row) : null;
  }

  async setEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason = 'disabled',
  ) {
    return this.#db.tx(async (sql) => {
      const [found] = await sql`
        SELECT 1 FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
        FOR NO KEY UPDATE`;
      if (!found) return null;
      if (enabled) {
        await sql`
          UPDATE webhooks SET enabled = true, disabled_reason = NULL, disabled_at = NULL, updated_at = ${now}::bigint
          WHERE webhook_id = ${webhookId}`;
      } else {
        await this.#disable(sql, webhookId, reason, now);
      }
      const [row] = await sql<Row[]>`SELECT * FROM webhooks WHERE webhook_id = ${webhookId}`;
      return toWebhook(row);
    });
  }

  async delete(instanceId: string, webhookId: string): Promise<boolean> {
    const result = await this.#db.sql`
      DELETE FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}`;
    return result.count > 0;
  }

  async rotateSecret(
    instanceId: string,
    webhookId: string,
    sealed: string,
    graceUntil: number | null,
    now: number,
  ) {
    const [row] = await this.#db.sql<Row[]>`
      UPDATE webhooks SET
        previous_secret_sealed = CASE WHEN ${graceUntil}::bigint IS NULL THEN NULL ELSE secret_sealed END,
        previous_secret_until = CASE WHEN ${graceUntil}::bigint IS NULL OR secret_sealed IS NULL THEN NULL
                                     ELSE ${graceUntil}::bigint END,
        secret_sealed = ${sealed}, updated_at = ${now}::bigint
      WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
      RETURNING *`;
    return row ? toWebhook(row) : null;
  }

  async forgetRotatedSecrets(now: number): Promise<number> {
    const result = await this.#db.sql`
      UPDATE webhooks SET previous_secret_sealed = NULL, previous_secret_until = NULL
      WHERE previous_secret_until IS NOT NULL AND previous_secret_until <= ${now}::bigint`;
    return result.count;
  }

  /** Inside the outcome writer's transaction; rows of their own, so ingest's lock on webhooks never waits. */
  async applyHealth(sql: Tx, changes: readonly HealthChange[]): Promise<void> {
    if (changes.length === 0) return;
    const hours = changes.flatMap((c) => c.hours.map((h) => ({ webhook_id: c.webhook_id, ...h })));
    await sql`
      INSERT INTO webhook_hours (webhook_id, hour, attempts, delivered)
      SELECT h.webhook_id, h.hour, h.attempts, h.delivered
      FROM unnest(${hours.map((h) => h.webhook_id)}::text[], ${hours.map((h) => h.hour)}::bigint[],
                  ${hours.map((h) => h.attempts)}::integer[], ${hours.map((h) => h.delivered)}::integer[])
           AS h(webhook_id, hour, attempts, delivered)
      WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.webhook_id = h.webhook_id)
      ORDER BY h.webhook_id, h.hour
      ON CONFLICT (webhook_id, hour) DO UPDATE SET attempts = webhook_hours.attempts + excluded.attempts,
        delivered = webhook_hours.delivered + excluded.delivered`;
    const sorted = [...changes].sort((a, b) => (a.webhook_id < b.webhook_id ? -1 : 1));
    await sql`
      INSERT INTO webhook_health (webhook_id, last_delivered_at, last_failed_at, consecutive_failures)
      SELECT c.webhook_id, c.delivered_at, c.failed_at, c.failures
      FROM unnest(${sorted.map((c) => c.webhook_id)}::text[], ${sorted.map((c) => c.last_delivered_at)}::bigint[],
                  ${sorted.map((c) => c.last_failed_at)}::bigint[], ${sorted.map((c) => c.failures)}::integer[])
           AS c(webhook_id, delivered_at, failed_at, failures)
      WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.webhook_id = c.webhook_id)
      ON CONFLICT (webhook_id) DO UPDATE SET
        last_delivered_at = GREATEST(webhook_health.last_delivered_at, excluded.last_delivered_at),
        last_failed_at = GREATEST(webhook_health.last_failed_at, excluded.last_failed_at),
        -- A delivery in the batch (it set last_delivered_at) starts the failures in a row over.
        consecutive_failures = excluded.consecutive_failures
          + CASE WHEN excluded.last_delivered_at IS NOT NULL THEN 0 ELSE webhook_health.consecutive_failures END`;
    // Hours no view counts any more go as the webhook's next ones come: a day's worth per webhook.
    const oldest = sorted.map((c) => firstCountedHour(Math.max(...c.hours.map((h) => h.hour))));
    await sql`
      DELETE FROM webhook_hours h USING unnest(${sorted.map((c) => c.webhook_id)}::text[], ${oldest}::bigint[])
        AS o(webhook_id, before)
      WHERE h.webhook_id = o.webhook_id AND h.hour < o.before`;
  }

  async health(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>> {
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
