/**
 * Operational events on PostgreSQL (domain/operational-events.ts): stored with their deliveries in the transaction
 * of what they report, so that a crash keeps both or neither, whichever process reported it.
 */
import type { Row } from 'postgres';
import { chatKey } from '../../domain/chat-key.ts';
import { newId } from '../../domain/ids.ts';
import {
  type Announcement,
  announcementTargets,
  OPERATOR_WEBHOOK_ID,
} from '../../domain/operational-events.ts';
import type { Webhook } from '../../domain/types.ts';
import type { PostgresDatabase, Tx } from '../postgres/database.ts';
import { toWebhook } from '../rows.ts';

/**
 * Announces what `make` says of the webhook; nothing when the webhook is gone or no one receives it. The receivers
 * are read without a lock: taking one would order this against ingest and other disables of the instance's
 * webhooks, for a race whose worst is a delivery queued for a webhook disabled at that very moment, which waits
 * for it to be enabled again, as any delivery of a disabled webhook does.
 */
export async function announce(
  db: PostgresDatabase,
  sql: Tx,
  webhookId: string,
  make: (subject: Webhook) => Announcement,
  now: number,
): Promise<void> {
  const [subject] = await sql<Row[]>`SELECT * FROM webhooks WHERE webhook_id = ${webhookId}`;
  if (!subject) return;
  const a = make(toWebhook(subject));
  const e = a.draft;
  const rows = await sql<Row[]>`
    SELECT * FROM webhooks WHERE enabled AND (instance_id = ${e.instance_id} OR webhook_id = ${OPERATOR_WEBHOOK_ID})
    ORDER BY created_at, webhook_id`;
  const targets = announcementTargets(a, rows.map(toWebhook));
  if (targets.length === 0) return;
  const chat = chatKey(e.event, e.payload);
  await sql`
    INSERT INTO events (event_id, instance_id, event, body, deliveries, created_at, chat)
    VALUES (${e.event_id}, ${e.instance_id}, ${e.event}, ${e.body}, ${targets.length}::integer, ${now}::bigint,
      ${chat})`;
  await sql`
    INSERT INTO deliveries (delivery_id, event_id, instance_id, webhook_id, event, status, created_at,
      next_attempt_at, chat)
    SELECT d.delivery_id, ${e.event_id}, ${e.instance_id}, d.webhook_id, ${e.event}, 'pending', ${now}::bigint,
      ${now}::bigint, ${chat}
    FROM unnest(${targets.map(() => newId('dlv', now))}::text[], ${targets.map((w) => w.webhook_id)}::text[])
      AS d(delivery_id, webhook_id)`;
  await db.notifyWork(sql);
}
