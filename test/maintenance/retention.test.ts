/**
 * SPEC §1 RETENTION_DAYS: finished deliveries and their attempts older than the retention period are deleted, in
 * small batches that leave the process free to deliver; pending ones are never deleted. Time is an injected clock
 * and the store a real SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import pino from 'pino';
import { eventBody } from '../../src/domain/event-body.ts';
import { RetentionSweeper } from '../../src/maintenance/retention.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import type { Store } from '../../src/store/ports.ts';
import type { Router } from '../../src/store/records.ts';
import { hook, publish, settled } from '../delivery/helpers.ts';
import { eventually, messagePayload, startTestHerald } from '../support/herald.ts';
import { webhookRecord } from '../support/records.ts';

const DAY = 86_400_000;
const silent = pino({ level: 'silent' });

/** Rows left in the store file, counted read-only from outside (a check, not product SQL). */
function count(dataDir: string, table: 'deliveries' | 'attempts' | 'events'): number {
  const db = new DatabaseSync(join(dataDir, 'herald.db'), { readOnly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test('Herald applies RETENTION_DAYS: finished deliveries, their attempts and events go; recent ones stay', async () => {
  let offset = 0;
  const clock = () => Date.now() + offset;
  const env = { RETENTION_DAYS: '14', RETRY_SCHEDULE: '0.05' };
  let h = await startTestHerald(env, { clock });
  const { dataDir } = h;
  const ok = await hook(h);
  const failing = await hook(h);
  failing.receiver.answer = () => ({ status: 500 });
  try {
    const delivered = await publish(h, ok.instanceId);
    const failed = await publish(h, failing.instanceId);
    const old = [
      await settled(h, ok.instanceId, ok.webhookId, delivered),
      await settled(h, failing.instanceId, failing.webhookId, failed),
    ];
    assert.deepEqual(
      old.map((d) => [d.status, d.attempts.length]),
      [
        ['delivered', 1],
        ['failed', 2],
      ],
    );
    offset = 10 * DAY;
    const recent = await publish(h, ok.instanceId);
    await settled(h, ok.instanceId, ok.webhookId, recent);
    assert.equal(count(dataDir, 'attempts'), 4);

    // 15 days after the first two: a restart's first sweep removes them, not the one 5 days old.
    offset = 15 * DAY;
    await h.close({ keepData: true });
    h = await startTestHerald(env, { clock, dataDir });
    await eventually(
      async () => (count(dataDir, 'deliveries') === 1 ? true : undefined),
      5000,
      'the sweep at start',
    );
    const gone = [
      [ok.instanceId, old[0].delivery_id],
      [failing.instanceId, old[1].delivery_id],
    ];
    for (const [instanceId, deliveryId] of gone) {
      const r = await h.request('GET', `/instances/${instanceId}/deliveries/${deliveryId}`);
      assert.equal(r.status, 404, `${deliveryId}, finished 15 days ago`);
    }
    assert.equal((await settled(h, ok.instanceId, ok.webhookId, recent)).status, 'delivered');
    assert.deepEqual([count(dataDir, 'attempts'), count(dataDir, 'events')], [1, 1]);

    // Idempotency lasts as long as the event is kept: the purged event_id is a new event when published again.
    const republished = await h.publish(ok.instanceId, {
      event: 'message',
      event_id: delivered,
      payload: messagePayload(),
    });
    assert.equal(republished.status, 202, JSON.stringify(republished.body));
    assert.equal(republished.body.deliveries, 1);
    await ok.receiver.waitFor(3);
  } finally {
    await h.close();
    await ok.receiver.close();
    await failing.receiver.close();
  }
});

/** A real store file with `finished` deliveries that ended at `endedAt` and `pending` ones created then. */
async function fill(store: Store, finished: number, pending: number, endedAt: number): Promise<string> {
  const ins = 'ins_retention00000000000001';
  await store.catalog.createInstance({
    instance_id: ins,
    name: 'r',
    status: 'STOPPED',
    phone: null,
    created_at: endedAt,
  });
  // Two webhooks: deliveries to the first are claimed and delivered, those to the second stay pending.
  for (const k of [1, 2]) {
    await store.webhooks.createWebhook(
      webhookRecord({ webhook_id: `whk_retention0000000000000${k}`, instance_id: ins }, endedAt),
    );
  }
  let n = 0;
  const drafts = (k: number) =>
    Array.from({ length: k }, () => {
      const e = {
        event_id: `evt_retention${String(++n).padStart(14, '0')}`,
        event: 'presence.update',
        instance_id: ins,
        timestamp: endedAt,
        payload: {},
      };
      return { ...e, body: eventBody(e) };
    });
  const only =
    (id: string): Router =>
    (_, webhooks) =>
      webhooks.filter((w) => w.webhook_id === id);
  for (let i = 0; i < finished; i += 1000) {
    await store.events.ingest(
      ins,
      drafts(Math.min(1000, finished - i)),
      only('whk_retention00000000000001'),
      endedAt,
    );
  }
  await store.events.ingest(ins, drafts(pending), only('whk_retention00000000000002'), endedAt);
  const outcome = {
    started_at: endedAt,
    duration_ms: 3,
    status_code: 200,
    error: null,
    response_body: 'ok',
    retry_after: null,
  };
  for (;;) {
    const claims = await store.claims.claimDue(endedAt, 1000, 1000, (w) => (w.endsWith('1') ? 1000 : 0));
    if (claims.length === 0) break;
    await store.outcomes.recordAttempts(
      claims.map((claim) => ({ claim, outcome, decision: { kind: 'delivered' as const } })),
      endedAt,
    );
  }
  return ins;
}

test('the cutoff is RETENTION_DAYS before the injected clock, to the millisecond; pending deliveries always stay', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-retention-'));
  const store = openSqliteStore(join(dataDir, 'herald.db'));
  try {
    const T = Date.UTC(2026, 0, 1);
    await fill(store, 3, 2, T);
    let now = T + 14 * DAY;
    const sweeper = new RetentionSweeper({ store, clock: () => now, retentionDays: 14, logger: silent });
    assert.deepEqual(await sweeper.sweep(), { deliveries: 0, events: 0 }, 'exactly 14 days old: kept');
    now += 1;
    assert.deepEqual(await sweeper.sweep(), { deliveries: 3, events: 3 });
    now += 365 * DAY;
    assert.deepEqual(await sweeper.sweep(), { deliveries: 0, events: 0 });
    assert.equal(count(dataDir, 'deliveries'), 2, 'the pending deliveries, a year old');
    assert.equal(count(dataDir, 'events'), 2);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a large purge runs in small batches and leaves the event loop free meanwhile', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-retention-'));
  const store = openSqliteStore(join(dataDir, 'herald.db'));
  try {
    const T = Date.UTC(2026, 0, 1);
    const FINISHED = 20_000;
    await fill(store, FINISHED, 10, T);
    let batches = 0;
    let longestBatch = 0;
    const counting: Pick<Store, 'retention' | 'webhooks' | 'portalLinks'> = {
      webhooks: store.webhooks,
      portalLinks: store.portalLinks,
      retention: {
        async purgeFinished(before, limit) {
          batches++;
          const started = performance.now();
          const r = await store.retention.purgeFinished(before, limit);
          longestBatch = Math.max(longestBatch, performance.now() - started);
          return r;
        },
      },
    };
    const sweeper = new RetentionSweeper({
      store: counting,
      clock: () => T + 30 * DAY,
      retentionDays: 14,
      logger: silent,
      batchSize: 500,
      pauseMs: 5,
    });
    // A 1 ms ticker stands for the rest of the process: its longest wait is how long the sweep blocked it.
    let last = performance.now();
    let longestGap = 0;
    let ticks = 0;
    const ticker = setInterval(() => {
      const at = performance.now();
      longestGap = Math.max(longestGap, at - last);
      last = at;
      ticks++;
    }, 1);
    const started = performance.now();
    const removed = await sweeper.sweep();
    const took = performance.now() - started;
    clearInterval(ticker);
    t.diagnostic(
      `${FINISHED} deliveries in ${batches} batches, ${took.toFixed(0)} ms; longest batch ${longestBatch.toFixed(1)} ms, longest event-loop wait ${longestGap.toFixed(1)} ms, ${ticks} ticks`,
    );
    assert.deepEqual(removed, { deliveries: FINISHED, events: FINISHED });
    assert.ok(batches >= FINISHED / 500, `${batches} batches`);
    assert.ok(ticks >= batches, 'other work ran between the batches');
    assert.ok(longestGap < 250, `the event loop waited ${longestGap.toFixed(0)} ms at most`);
    assert.equal(count(dataDir, 'deliveries'), 10);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
