/** The delivery log on SQLite: pages, details with attempts, and manual redelivery. */

import type { SQLInputValue } from 'node:sqlite';
import { redeliveryConflict } from '../../domain/store-rules.ts';
import type { DeliveryLog } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { SqliteQueue } from '../queue/sqlite.ts';
import { waitingFor } from '../queue/transitions.ts';
import type {
  DeliveryDetail,
  DeliveryFilter,
  InstanceCounts,
  RedeliverRange,
  RedeliverResult,
} from '../records.ts';
import { toAttempt, toDelivery, toPage } from '../rows.ts';
import { NOT_OPERATOR } from '../sql-fragments.ts';

type Row = Record<string, SQLInputValue>;

export class SqliteDeliveryLog extends QueueOperation<SqliteQueue> implements DeliveryLog {
  async listDeliveries(instanceId: string, f: DeliveryFilter) {
    const where = ['instance_id = ?'];
    const params: SQLInputValue[] = [instanceId];
    const add = (sql: string, value: SQLInputValue | undefined) => {
      if (value === undefined) return;
      where.push(sql);
      params.push(value);
    };
    add('status = ?', f.status);
    add('webhook_id = ?', f.webhook_id);
    add('event = ?', f.event);
    add('event_id = ?', f.event_id);
    add('chat = ?', f.chat);
    add('created_at >= ?', f.since);
    add('created_at < ?', f.until);
    add('seq < ?', f.cursor === undefined ? undefined : Number(f.cursor));
    if (!f.operator) where.push(NOT_OPERATOR());
    const rows = this.db
      .q(
        `SELECT *, ${waitingFor('deliveries')} FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT ?`,
      )
      .all(...params, f.limit + 1);
    return toPage(rows, f.limit);
  }

  async getDelivery(
    instanceId: string,
    deliveryId: string,
    operator = false,
  ): Promise<DeliveryDetail | null> {
    const row = this.db
      .q(
        `SELECT d.*, e.body, e.media_failure, ${waitingFor('d')} FROM deliveries d JOIN events e ON e.event_id = d.event_id
       WHERE d.instance_id = ? AND d.delivery_id = ? AND (? OR ${NOT_OPERATOR('d.')})`,
      )
      .get(instanceId, deliveryId, operator ? 1 : 0);
    if (!row) return null;
    const attempts = this.db
      .q('SELECT * FROM attempts WHERE delivery_id = ? ORDER BY attempt, started_at')
      .all(deliveryId);
    return {
      ...toDelivery(row),
      request_body: row.body as string,
      attempts_log: attempts.map(toAttempt),
      media_failure: (row.media_failure as string | null) ?? null,
    };
  }

  async redeliver(
    instanceId: string,
    deliveryId: string,
    now: number,
    operator = false,
  ): Promise<RedeliverResult> {
    return this.db.tx(() => {
      const row = this.db
        .q(
          `SELECT d.status, d.webhook_id, w.enabled FROM deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id
         WHERE d.instance_id = ? AND d.delivery_id = ? AND (? OR ${NOT_OPERATOR('d.')})`,
        )
        .get(instanceId, deliveryId, operator ? 1 : 0) as Row | undefined;
      if (!row) return null;
      const conflict = redeliveryConflict(row as { status: string; webhook_id: string }, row.enabled === 1);
      if (conflict) return { ok: false, conflict };
      const seq = this.db.q('SELECT seq FROM deliveries WHERE delivery_id = ?').get(deliveryId)
        ?.seq as number;
      this.queue.requeue([seq], now);
      const updated = this.db
        .q(`SELECT *, ${waitingFor('deliveries')} FROM deliveries WHERE delivery_id = ?`)
        .get(deliveryId) as Row;
      return { ok: true, delivery: toDelivery(updated) };
    });
  }

  async redeliverFailed(instanceId: string, range: RedeliverRange, now: number): Promise<number> {
    const where = [
      'instance_id = ?',
      "status = 'failed'",
      'webhook_id IN (SELECT webhook_id FROM webhooks WHERE instance_id = ? AND enabled = 1)',
    ];
    const params: SQLInputValue[] = [instanceId, instanceId];
    if (range.webhook_id !== undefined) {
      where.push('webhook_id = ?');
      params.push(range.webhook_id);
    }
    if (range.since !== undefined) {
      where.push('created_at >= ?');
      params.push(range.since);
    }
    if (range.until !== undefined) {
      where.push('created_at < ?');
      params.push(range.until);
    }
    return this.db.tx(() => {
      const seqs = this.db
        .rows(`SELECT seq FROM deliveries WHERE ${where.join(' AND ')} ORDER BY seq`)
        .all(...params)
        .map((r) => (r as unknown as [number])[0]);
      this.queue.requeue(seqs, now);
      return seqs.length;
    });
  }

  /** Every delivery belongs to a webhook, so failed ones are counted per webhook, through its (webhook_id, status) index. */
  async instanceCounts(instanceId?: string): Promise<Map<string, InstanceCounts>> {
    const rows = this.db
      .q(
        `SELECT instance_id, count(*) AS webhooks, sum(failed) AS failed,
           sum(CASE WHEN enabled = 1 THEN failed ELSE 0 END) AS redeliverable
         FROM (SELECT w.instance_id, w.enabled,
                 (SELECT count(*) FROM deliveries d WHERE d.webhook_id = w.webhook_id AND d.status = 'failed') AS failed
               FROM webhooks w WHERE ${instanceId === undefined ? 'w.instance_id IS NOT NULL' : 'w.instance_id = ?'})
         GROUP BY instance_id`,
      )
      .all(...(instanceId === undefined ? [] : [instanceId]));
    return new Map(
      rows.map((r) => [
        r.instance_id as string,
        {
          webhooks: Number(r.webhooks),
          failed_deliveries: Number(r.failed),
          redeliverable_deliveries: Number(r.redeliverable),
        },
      ]),
    );
  }
}
