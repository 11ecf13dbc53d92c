/** The delivery log on PostgreSQL: pages, details with attempts, and manual redelivery (which wakes workers). */

import type { Row } from 'postgres';
import { redeliveryConflict } from '../../domain/store-rules.ts';
import type { DeliveryLog } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { PostgresQueue } from '../queue/postgres.ts';
import { WAITS, withWaitingFor } from '../queue/postgres-chats.ts';
import type {
  DeliveryDetail,
  DeliveryFilter,
  InstanceCounts,
  RedeliverRange,
  RedeliverResult,
} from '../records.ts';
import { toAttempt, toDelivery, toPage } from '../rows.ts';
import { NOT_OPERATOR } from '../sql-fragments.ts';

export class PostgresDeliveryLog extends QueueOperation<PostgresQueue> implements DeliveryLog {
  /** A page, and what its waiting deliveries wait for, in one snapshot. */
  async listDeliveries(instanceId: string, f: DeliveryFilter) {
    const cursor = f.cursor === undefined ? null : Number(f.cursor);
    const rows = (await this.db.sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (sql) => {
      // A null filter value matches everything: one statement text for every combination of filters.
      const found = await sql<Row[]>`
        SELECT *, ${sql.unsafe(WAITS('deliveries'))} FROM deliveries
        WHERE instance_id = ${instanceId}
          AND (${f.status ?? null}::text IS NULL OR status = ${f.status ?? null}::text)
          AND (${f.webhook_id ?? null}::text IS NULL OR webhook_id = ${f.webhook_id ?? null}::text)
          AND (${f.event ?? null}::text IS NULL OR event = ${f.event ?? null}::text)
          AND (${f.event_id ?? null}::text IS NULL OR event_id = ${f.event_id ?? null}::text)
          AND (${f.chat ?? null}::text IS NULL OR chat = ${f.chat ?? null}::text)
          AND (${f.since ?? null}::bigint IS NULL OR created_at >= ${f.since ?? null}::bigint)
          AND (${f.until ?? null}::bigint IS NULL OR created_at < ${f.until ?? null}::bigint)
          AND (${cursor}::bigint IS NULL OR seq < ${cursor}::bigint)
          AND (${f.operator ?? false}::boolean OR ${sql.unsafe(NOT_OPERATOR())})
        ORDER BY seq DESC LIMIT ${f.limit + 1}::integer`;
      return withWaitingFor(sql, found);
    })) as Row[];
    return toPage(rows, f.limit);
  }

  /** One snapshot for the delivery and its attempts, so that its count and its log agree even mid-write. */
  async getDelivery(
    instanceId: string,
    deliveryId: string,
    operator = false,
  ): Promise<DeliveryDetail | null> {
    return this.db.sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (sql) => {
      const [row] = await sql<Row[]>`
        SELECT d.*, e.body, e.media_failure, ${sql.unsafe(WAITS('d'))}
        FROM deliveries d JOIN events e ON e.event_id = d.event_id
        WHERE d.instance_id = ${instanceId} AND d.delivery_id = ${deliveryId}
          AND (${operator}::boolean OR ${sql.unsafe(NOT_OPERATOR('d.'))})`;
      if (!row) return null;
      await withWaitingFor(sql, [row]);
      const attempts = await sql<Row[]>`
        SELECT * FROM attempts WHERE delivery_id = ${deliveryId} ORDER BY attempt, started_at`;
      return {
        ...toDelivery(row),
        request_body: row.body as string,
        attempts_log: attempts.map(toAttempt),
        media_failure: (row.media_failure as string | null) ?? null,
      };
    }) as Promise<DeliveryDetail | null>;
  }

  async redeliver(
    instanceId: string,
    deliveryId: string,
    now: number,
    operator = false,
  ): Promise<RedeliverResult> {
    return this.db.tx(async (sql) => {
      const [row] = await sql<Row[]>`
        SELECT d.status, d.webhook_id, w.enabled FROM deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id
        WHERE d.instance_id = ${instanceId} AND d.delivery_id = ${deliveryId}
          AND (${operator}::boolean OR ${sql.unsafe(NOT_OPERATOR('d.'))})
        FOR UPDATE OF d`;
      if (!row) return null;
      const conflict = redeliveryConflict(row as { status: string; webhook_id: string }, row.enabled);
      if (conflict) return { ok: false, conflict };
      await this.queue.requeue(sql, 'delivery_id = $2', [deliveryId], now);
      const [updated] = await withWaitingFor(
        sql,
        await sql<
          Row[]
        >`SELECT *, ${sql.unsafe(WAITS('deliveries'))} FROM deliveries WHERE delivery_id = ${deliveryId}`,
      );
      return { ok: true, delivery: toDelivery(updated) };
    });
  }

  async redeliverFailed(instanceId: string, range: RedeliverRange, now: number): Promise<number> {
    return this.db.tx(async (sql) => {
      return this.queue.requeue(
        sql,
        `instance_id = $2 AND status = 'failed'
         AND webhook_id IN (SELECT webhook_id FROM webhooks WHERE instance_id = $2 AND enabled)
         AND ($3::text IS NULL OR webhook_id = $3::text)
         AND ($4::bigint IS NULL OR created_at >= $4::bigint)
         AND ($5::bigint IS NULL OR created_at < $5::bigint)`,
        [instanceId, range.webhook_id ?? null, range.since ?? null, range.until ?? null],
        now,
      );
    });
  }

  /** Every delivery belongs to a webhook, so failed ones are counted per webhook, through its (webhook_id, status) index. */
  async instanceCounts(instanceId?: string): Promise<Map<string, InstanceCounts>> {
    const sql = this.db.sql;
    const rows = await sql<({ instance_id: string } & InstanceCounts)[]>`
      SELECT w.instance_id, count(*)::integer AS webhooks,
        sum(f.failed)::integer AS failed_deliveries,
        COALESCE(sum(f.failed) FILTER (WHERE w.enabled), 0)::integer AS redeliverable_deliveries
      FROM webhooks w CROSS JOIN LATERAL (
        SELECT count(*) AS failed FROM deliveries d WHERE d.webhook_id = w.webhook_id AND d.status = 'failed'
      ) f
      WHERE ${instanceId === undefined ? sql`w.instance_id IS NOT NULL` : sql`w.instance_id = ${instanceId}`}
      GROUP BY w.instance_id`;
    return new Map(rows.map(({ instance_id, ...counts }) => [instance_id, counts]));
  }
}
