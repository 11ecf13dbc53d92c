/** Webhooks on SQLite: their configuration, enablement, secret rotation and health. */
import type { SQLInputValue } from 'node:sqlite';
import { firstCountedHour, type HealthChange, type WebhookHealth } from '../../domain/health.ts';
import type { Webhook } from '../../domain/types.ts';
import { toWebhook } from '../rows.ts';
import type { WebhookConfig } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

export class SqliteWebhooks {
  readonly #db: SqliteDatabase;
  /** Ends a webhook's pending work when it is disabled (queue.ts). */
  readonly #disable: (webhookId: string, reason: string, now: number) => void;

  constructor(db: SqliteDatabase, disable: (webhookId: string, reason: string, now: number) => void) {
    this.#db = db;
    this.#disable = disable;
  }

  /** One synchronous write transaction: no other create can run between the count and the insert. */
  async create(w: Webhook, maxPerInstance = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.#db.tx(() => {
      const row = this.#db.q('SELECT COUNT(*) AS n FROM webhooks WHERE instance_id = ?').get(w.instance_id);
      if (Number(row?.n) >= maxPerInstance) return false;
      this.#insert(w);
      return true;
    });
  }

  #insert(w: Webhook): void {
    this.#db
      .q(
        `INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
          disabled_reason, disabled_at, created_at, updated_at, filter, headers_sealed, rate_limit)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        w.webhook_id,
        w.instance_id,
        w.destination_url,
        JSON.stringify(w.events),
        w.ignore_status ? 1 : 0,
        w.enabled ? 1 : 0,
        w.secret_sealed,
        w.disabled_reason,
        w.disabled_at,
        w.created_at,
        w.updated_at,
        w.filter ? JSON.stringify(w.filter) : null,
        w.headers_sealed ?? null,
        w.rate_limit ?? null,
      );
  }

  async list(instanceId: string): Promise<Webhook[]> {
    return this.#db
      .q('SELECT * FROM webhooks WHERE instance_id = ? ORDER BY created_at, webhook_id')
      .all(instanceId)
      .map(toWebhook);
  }

  async get(instanceId: string, webhookId: string): Promise<Webhook | null> {
    return this.#get(instanceId, webhookId);
  }

  #get(instanceId: string, webhookId: string): Webhook | null {
    const row = this.#db
      .q('SELECT * FROM webhooks WHERE instance_id = ? AND webhook_id = ?')
      .get(instanceId, webhookId);
    return row ? toWebhook(row) : null;
  }

  async update(
    instanceId: string,
    webhookId: string,
    c: WebhookConfig,
    now: number,
  ): Promise<Webhook | null> {
    // A secret set or cleared ends the grace of a rotated-out one.
    const secretSql =
      c.secret.kind === 'keep'
        ? 'secret_sealed'
        : '?, previous_secret_sealed = NULL, previous_secret_until = NULL';
    const params: SQLInputValue[] = [
      c.destination_url,
      JSON.stringify(c.events),
      c.ignore_status ? 1 : 0,
      now,
      c.filter ? JSON.stringify(c.filter) : null,
      c.headers_sealed,
      c.rate_limit,
    ];
    if (c.secret.kind !== 'keep') params.push(c.secret.kind === 'set' ? c.secret.sealed : null);
    const changed = this.#db
      .q(
        `UPDATE webhooks SET destination_url = ?, events = ?, ignore_status = ?, updated_at = ?, filter = ?,
           headers_sealed = ?, rate_limit = ?, secret_sealed = ${secretSql}
         WHERE instance_id = ? AND webhook_id = ?`,
      )
      .run(...params, instanceId, webhookId).changes;
    return changed ? this.#get(instanceId, webhookId) : null;
  }

  async setEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason = 'disabled',
  ) {
    return this.#db.tx(() => {
      if (!this.#get(instanceId, webhookId)) return null;
      if (enabled) {
        this.#db
          .q(
            'UPDATE webhooks SET enabled = 1, disabled_reason = NULL, disabled_at = NULL, updated_at = ? WHERE webhook_id = ?',
          )
          .run(now, webhookId);
      } else {
        this.#disable(webhookId, reason, now);
      }
      return this.#get(instanceId, webhookId);
    });
  }

  async delete(instanceId: string, webhookId: string): Promise<boolean> {
    return (
      this.#db.q('DELETE FROM webhooks WHERE instance_id = ? AND webhook_id = ?').run(instanceId, webhookId)
        .changes > 0
    );
  }

  async rotateSecret(
    instanceId: string,
    webhookId: string,
    sealed: string,
    graceUntil: number | null,
    now: number,
  ) {
    const changed = this.#db
      .q(
        `UPDATE webhooks SET
           previous_secret_sealed = CASE WHEN ?1 IS NULL THEN NULL ELSE secret_sealed END,
           previous_secret_until = CASE WHEN ?1 IS NULL OR secret_sealed IS NULL THEN NULL ELSE ?1 END,
           secret_sealed = ?2, updated_at = ?3
         WHERE instance_id = ?4 AND webhook_id = ?5`,
      )
      .run(graceUntil, sealed, now, instanceId, webhookId).changes;
    return changed ? this.#get(instanceId, webhookId) : null;
  }

  async forgetRotatedSecrets(now: number): Promise<number> {
    return Number(
      this.#db
        .q(
          `UPDATE webhooks SET previous_secret_sealed = NULL, previous_secret_until = NULL
           WHERE previous_secret_until IS NOT NULL AND previous_secret_until <= ?`,
        )
        .run(now).changes,
    );
  }

  /** Called inside the outcome writer's transaction. */
  applyHealth(changes: readonly HealthChange[]): void {
    const hour = this.#db.q(
      `INSERT INTO webhook_hours (webhook_id, hour, attempts, delivered) SELECT ?1, ?2, ?3, ?4
       WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhook_id = ?1)
       ON CONFLICT (webhook_id, hour) DO UPDATE SET attempts = attempts + excluded.attempts,
         delivered = delivered + excluded.delivered`,
    );
    const health = this.#db.q(
      `INSERT INTO webhook_health (webhook_id, last_delivered_at, last_failed_at, consecutive_failures)
       SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM webhooks WHERE webhook_id = ?1)
       ON CONFLICT (webhook_id) DO UPDATE SET
         last_delivered_at = COALESCE(MAX(last_delivered_at, excluded.last_delivered_at), last_delivered_at, excluded.last_delivered_at),
         last_failed_at = COALESCE(MAX(last_failed_at, excluded.last_failed_at), last_failed_at, excluded.last_failed_at),
         consecutive_failures = CASE WHEN ?5 THEN excluded.consecutive_failures ELSE consecutive_failures + excluded.consecutive_failures END`,
    );
    // Hours no view counts any more go as the webhook's next ones come: the table stays a day's worth per webhook.
    const old = this.#db.q('DELETE FROM webhook_hours WHERE webhook_id = ? AND hour < ?');
    for (const c of changes) {
      for (const h of c.hours) hour.run(c.webhook_id, h.hour, h.attempts, h.delivered);
      health.run(c.webhook_id, c.last_delivered_at, c.last_failed_at, c.failures, c.reset ? 1 : 0);
      old.run(c.webhook_id, firstCountedHour(Math.max(...c.hours.map((h) => h.hour))));
    }
  }

  async health(instanceId: string | null, now: number): Promise<Map<string, WebhookHealth>> {
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
