/**
 * For tests that drive a dispatcher directly: a SQLite store on a fresh file with webhooks and deliveries due, and a
 * real sender (its delivery thread) allowed to reach 127.0.0.1.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ThreadFeed } from '../../src/delivery/thread-feed.ts';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import type { Webhook } from '../../src/domain/types.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import type { Store } from '../../src/store/ports.ts';
import { webhookRecord } from './records.ts';

export const INSTANCE = 'ins_ahead000000000000001';
export const WEBHOOK = 'whk_ahead000000000000001';

/**
 * `n` events due at `now`, numbered in order, each delivered to every webhook: one per entry of `webhooks` (its
 * fields over a default webhook's), the first with id WEBHOOK.
 */
export async function storeWithDeliveries(
  n: number,
  now: number,
  webhooks: Partial<Webhook>[] = [{}],
): Promise<Store> {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'herald-ahead-')), 'herald.db'));
  await store.catalog.createInstance({
    instance_id: INSTANCE,
    name: 'a',
    status: 'WORKING',
    phone: null,
    created_at: now,
  });
  for (const [i, webhook] of webhooks.entries()) {
    const webhook_id = i === 0 ? WEBHOOK : `${WEBHOOK.slice(0, -2)}${String(i + 1).padStart(2, '0')}`;
    await store.webhooks.createWebhook(webhookRecord({ ...webhook, webhook_id, instance_id: INSTANCE }, now));
  }
  const drafts = Array.from({ length: n }, (_, i) => {
    const e = {
      event_id: `evt_ahead${String(i).padStart(15, '0')}`,
      event: 'presence.update',
      instance_id: INSTANCE,
      timestamp: now,
      payload: {},
    };
    return { ...e, body: eventBody(e) };
  });
  await store.events.ingest(INSTANCE, drafts, route, now);
  return store;
}

/** The real sender, its delivery thread running at most `maxRunning` attempts, with a 5 s timeout. */
export const loopbackSender = (maxRunning = 512) =>
  new ThreadFeed({
    timeoutMs: 5000,
    destinations: { allowPrivate: true },
    secretBox: new SecretBox(randomBytes(32)),
    userAgent: 'Herald/test',
    clock: Date.now,
    logger: pino({ level: 'silent' }),
    maxRunning,
  });
