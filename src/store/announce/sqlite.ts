/**
 * Operational events on SQLite (domain/operational-events.ts): stored with their deliveries in the transaction of
 * what they report, so that a crash keeps both or neither.
 */
import { newId } from '../../domain/ids.ts';
import {
  type Announcement,
  announcementTargets,
  OPERATOR_WEBHOOK_ID,
} from '../../domain/operational-events.ts';
import type { Webhook } from '../../domain/types.ts';
import { insertDelivery, insertEvent } from '../events/sqlite.ts';
import { toWebhook } from '../rows.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

/** Announces what `make` says of the webhook; nothing when the webhook is gone or no one receives it. */
export function announce(
  db: SqliteDatabase,
  webhookId: string,
  make: (subject: Webhook) => Announcement,
  now: number,
): void {
  const row = db.q('SELECT * FROM webhooks WHERE webhook_id = ?').get(webhookId);
  if (!row) return;
  const a = make(toWebhook(row));
  const webhooks = db
    .q(
      `SELECT * FROM webhooks WHERE enabled = 1 AND (instance_id = ? OR webhook_id = ?)
       ORDER BY created_at, webhook_id`,
    )
    .all(a.draft.instance_id, OPERATOR_WEBHOOK_ID)
    .map(toWebhook);
  const targets = announcementTargets(a, webhooks);
  if (targets.length === 0) return;
  const chat = insertEvent(db, a.draft, targets.length, now);
  for (const w of targets) insertDelivery(db, a.draft, w.webhook_id, newId('dlv', now), now, now, chat);
  db.notifyWork();
}
