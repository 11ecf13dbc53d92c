/** Webhooks on PostgreSQL: their configuration, enablement, secret rotation and health. */

import type { Row } from 'postgres';
import { OPERATIONAL_KINDS, OPERATOR_WEBHOOK_ID } from '../../domain/operational-events.ts';
import type { Webhook } from '../../domain/types.ts';
import type { Webhooks } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { PostgresQueue } from '../queue/postgres.ts';
import type { OperatorDestination, WebhookConfig } from '../records.ts';
import { toWebhook } from '../rows.ts';

export class PostgresWebhooks extends QueueOperation<PostgresQueue> implements Webhooks {
  /**
   * The instance's row is locked before the count: creates for one instance, from every process on the database,
   * take turns. The count is a statement of its own, so that its snapshot is taken once the lock is held. FOR NO KEY
   * UPDATE leaves ingest alone (its foreign keys only take a key share).
   */
  async createWebhook(w: Webhook, maxPerInstance = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.db.tx(async (sql) => {
      await sql`SELECT 1 FROM instances WHERE instance_id = ${w.instance_id} FOR NO KEY UPDATE`;
      const [row] = await sql<{ n: number }[]>`
        SELECT count(*)::integer AS n FROM webhooks WHERE instance_id = ${w.instance_id}`;
      if ((row?.n ?? 0) >= maxPerInstance) return false;
      await sql`
        INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
          disabled_reason, disabled_at, created_at, updated_at, filter, headers_sealed, rate_limit, standard_webhooks,
          ordering, destination_sealed)
        VALUES (${w.webhook_id}, ${w.instance_id}, ${w.destination_url}, ${JSON.stringify(w.events)},
          ${w.ignore_status}, ${w.enabled}, ${w.secret_sealed}, ${w.disabled_reason}, ${w.disabled_at}::bigint,
          ${w.created_at}::bigint, ${w.updated_at}::bigint, ${w.filter ? JSON.stringify(w.filter) : null},
          ${w.headers_sealed ?? null}, ${w.rate_limit ?? null}::integer, ${w.standard_webhooks ?? false},
          ${w.ordering ?? 'none'}, ${w.destination_sealed ?? null})`;
      return true;
    });
  }

  async listWebhooks(instanceId: string): Promise<Webhook[]> {
    const rows = await this.db.sql<Row[]>`
      SELECT * FROM webhooks WHERE instance_id = ${instanceId} ORDER BY created_at, webhook_id`;
    return rows.map(toWebhook);
  }

  async getWebhook(instanceId: string, webhookId: string): Promise<Webhook | null> {
    const [row] = await this.db.sql<Row[]>`
      SELECT * FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}`;
    return row ? toWebhook(row) : null;
  }

  async updateWebhook(
    instanceId: string,
    webhookId: string,
    c: WebhookConfig,
    now: number,
  ): Promise<Webhook | null> {
    const keep = c.secret.kind === 'keep';
    const sealed = c.secret.kind === 'set' ? c.secret.sealed : null;
    // A secret set or cleared ends the grace of a rotated-out one.
    return this.db.tx(async (sql) => {
      const [row] = await sql<Row[]>`
      UPDATE webhooks SET destination_url = ${c.destination_url}, events = ${JSON.stringify(c.events)},
        ignore_status = ${c.ignore_status}, updated_at = ${now}::bigint,
        filter = ${c.filter ? JSON.stringify(c.filter) : null}, headers_sealed = ${c.headers_sealed},
        rate_limit = ${c.rate_limit}::integer, standard_webhooks = ${c.standard_webhooks}, ordering = ${c.ordering},
        destination_sealed = ${c.destination_sealed},
        secret_sealed = CASE WHEN ${keep}::boolean THEN secret_sealed ELSE ${sealed}::text END,
        previous_secret_sealed = CASE WHEN ${keep}::boolean THEN previous_secret_sealed END,
        previous_secret_until = CASE WHEN ${keep}::boolean THEN previous_secret_until END
      WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
      RETURNING *`;
      if (row && c.ordering === 'none') await this.queue.unorder(sql, webhookId, now);
      return row ? toWebhook(row) : null;
    });
  }

  async setWebhookEnabled(
    instanceId: string,
    webhookId: string,
    enabled: boolean,
    now: number,
    reason = 'disabled',
  ) {
    return this.db.tx(async (sql) => {
      const [found] = await sql`
        SELECT 1 FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
        FOR NO KEY UPDATE`;
      if (!found) return null;
      if (enabled) {
        await sql`
          UPDATE webhooks SET enabled = true, disabled_reason = NULL, disabled_at = NULL, updated_at = ${now}::bigint
          WHERE webhook_id = ${webhookId}`;
      } else {
        await this.queue.endForWebhook(sql, webhookId, reason, now);
      }
      const [row] = await sql<Row[]>`SELECT * FROM webhooks WHERE webhook_id = ${webhookId}`;
      return toWebhook(row);
    });
  }

  /**
   * Locks in the outcome writer's order (webhook, then its deliveries in key order) before the delete: deleted
   * straight away, the webhook's row was locked whole first, so an outcome holding one of its deliveries and then
   * checking the webhook for its hourly counts closed a cycle, and PostgreSQL failed the delete as a deadlock.
   * FOR NO KEY UPDATE lets that check through; the delete's own lock comes once nothing holds the deliveries.
   */
  async deleteWebhook(instanceId: string, webhookId: string): Promise<boolean> {
    return this.db.tx(async (sql) => {
      const [found] = await sql`
        SELECT 1 FROM webhooks WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId} FOR NO KEY UPDATE`;
      if (!found) return false;
      // Locked in a subquery, so that a webhook with a million deliveries sends one row back, not a million.
      await sql`
        SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE webhook_id = ${webhookId} ORDER BY delivery_id
        FOR UPDATE) AS locked`;
      return (await sql`DELETE FROM webhooks WHERE webhook_id = ${webhookId}`).count > 0;
    });
  }

  async rotateSecret(
    instanceId: string,
    webhookId: string,
    sealed: string,
    graceUntil: number | null,
    now: number,
  ) {
    const [row] = await this.db.sql<Row[]>`
      UPDATE webhooks SET
        previous_secret_sealed = CASE WHEN ${graceUntil}::bigint IS NULL THEN NULL ELSE secret_sealed END,
        previous_secret_until = CASE WHEN ${graceUntil}::bigint IS NULL OR secret_sealed IS NULL THEN NULL
                                     ELSE ${graceUntil}::bigint END,
        secret_sealed = ${sealed}, updated_at = ${now}::bigint
      WHERE instance_id = ${instanceId} AND webhook_id = ${webhookId}
      RETURNING *`;
    return row ? toWebhook(row) : null;
  }

  async setOperator(destination: OperatorDestination | null, now: number): Promise<void> {
    if (!destination) {
      await this.db.sql`
        UPDATE webhooks SET enabled = false, updated_at = ${now}::bigint
        WHERE webhook_id = ${OPERATOR_WEBHOOK_ID} AND enabled`;
      return;
    }
    const events = JSON.stringify(OPERATIONAL_KINDS);
    await this.db.sql`
      INSERT INTO webhooks (webhook_id, instance_id, destination_url, events, ignore_status, enabled, secret_sealed,
        created_at, updated_at)
      VALUES (${OPERATOR_WEBHOOK_ID}, NULL, ${destination.destination_url}, ${events}, false, true,
        ${destination.secret_sealed}, ${now}::bigint, ${now}::bigint)
      ON CONFLICT (webhook_id) DO UPDATE SET destination_url = excluded.destination_url, events = excluded.events,
        enabled = true, secret_sealed = excluded.secret_sealed, disabled_reason = NULL, disabled_at = NULL,
        updated_at = excluded.updated_at`;
  }

  async forgetRotatedSecrets(now: number): Promise<number> {
    const result = await this.db.sql`
      UPDATE webhooks SET previous_secret_sealed = NULL, previous_secret_until = NULL
      WHERE previous_secret_until IS NOT NULL AND previous_secret_until <= ${now}::bigint`;
    return result.count;
  }
}
