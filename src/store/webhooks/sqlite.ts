/** Webhooks on SQLite: their configuration, enablement and secret rotation. */
import type { SQLInputValue } from 'node:sqlite';
import { OPERATIONAL_KINDS, OPERATOR_WEBHOOK_ID } from '../../domain/operational-events.ts';
import type { Webhook } from '../../domain/types.ts';
import type { Webhooks } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { SqliteQueue } from '../queue/sqlite.ts';
import type { OperatorDestination, WebhookConfig } from '../records.ts';
import { toWebhook } from '../rows.ts';

export class SqliteWebhooks extends QueueOperation<SqliteQueue> implements Webhooks {
  /** One synchronous write transaction: no other create can run between the count and the insert. */
  async createWebhook(w: Webhook, maxPerInstance = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.db.tx(() => {
      const row = this.db.q('SELECT COUNT(*) AS n FROM webhooks WHERE instance_id = ?').get(w.instance_id);
      if (Number(row?.n) >= maxPerInstance) return false;
      this.#insert(w);
      return true;
    });
  }

  #insert(w: Webhook): void {
    this.db
      .q(
        `INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
          disabled_reason, disabled_at, created_at, updated_at, filter, headers_sealed, rate_limit, standard_webhooks,
          ordering, destination_sealed)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
        w.standard_webhooks ? 1 : 0,
        w.ordering ?? 'none',
        w.destination_sealed ?? null,
      );
  }

  async listWebhooks(instanceId: string): Promise<Webhook[]> {
    return this.db
      .q('SELECT * FROM webhooks WHERE instance_id = ? ORDER BY created_at, webhook_id')
      .all(instanceId)
      .map(toWebhook);
  }

  async getWebhook(instanceId: string, webhookId: string): Promise<Webhook | null> {
    return this.#get(instanceId, webhookId);
  }

  #get(instanceId: string, webhookId: string): Webhook | null {
    const row = this.db
      .q('SELECT * FROM webhooks WHERE instance_id = ? AND webhook_id = ?')
      .get(instanceId, webhookId);
    return row ? toWebhook(row) : null;
  }

  async updateWebhook(
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
      c.standard_webhooks ? 1 : 0,
      c.ordering,
      c.destination_sealed,
    ];
    if (c.secret.kind !== 'keep') params.push(c.secret.kind === 'set' ? c.secret.sealed : null);
    const changed = this.db
      .q(
        `UPDATE webhooks SET destination_url = ?, events = ?, ignore_status = ?, updated_at = ?, filter = ?,
           headers_sealed = ?, rate_limit = ?, standard_webhooks = ?, ordering = ?, destination_sealed = ?, secret_sealed = ${secretSql}
         WHERE instance_id = ? AND webhook_id = ?`,
      )
      .run(...params, instanceId, webhookId).changes;
    if (changed && c.ordering === 'none') this.queue.unorder(webhookId, now);
    return changed ? this.#get(instanceId, webhookId) : null;
  }

  async setWebhookEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason = 'disabled',
  ) {
    return this.db.tx(() => {
      if (!this.#get(instanceId, webhookId)) return null;
      if (enabled) {
        this.db
          .q(
            'UPDATE webhooks SET enabled = 1, disabled_reason = NULL, disabled_at = NULL, updated_at = ? WHERE webhook_id = ?',
          )
          .run(now, webhookId);
      } else {
        this.queue.endForWebhook(webhookId, reason, now);
      }
      return this.#get(instanceId, webhookId);
    });
  }

  async deleteWebhook(instanceId: string, webhookId: string): Promise<boolean> {
    return (
      this.db.q('DELETE FROM webhooks WHERE instance_id = ? AND webhook_id = ?').run(instanceId, webhookId)
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
    const changed = this.db
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

  async setOperator(destination: OperatorDestination | null, now: number): Promise<void> {
    this.db.tx(() => {
      if (!destination) {
        this.db
          .q(`UPDATE webhooks SET enabled = 0, updated_at = ? WHERE webhook_id = ? AND enabled = 1`)
          .run(now, OPERATOR_WEBHOOK_ID);
        return;
      }
      this.db
        .q(
          `INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
             created_at, updated_at)
           VALUES (?1, NULL, ?2, ?3, 0, 1, ?4, ?5, ?5)
           ON CONFLICT (webhook_id) DO UPDATE SET destination_url = ?2, events = ?3, enabled = 1, secret_sealed = ?4,
             disabled_reason = NULL, disabled_at = NULL, updated_at = ?5`,
        )
        .run(
          OPERATOR_WEBHOOK_ID,
          destination.destination_url,
          JSON.stringify(OPERATIONAL_KINDS),
          destination.secret_sealed,
          now,
        );
    });
  }

  async forgetRotatedSecrets(now: number): Promise<number> {
    return Number(
      this.db
        .q(
          `UPDATE webhooks SET previous_secret_sealed = NULL, previous_secret_until = NULL
           WHERE previous_secret_until IS NOT NULL AND previous_secret_until <= ?`,
        )
        .run(now).changes,
    );
  }
}
