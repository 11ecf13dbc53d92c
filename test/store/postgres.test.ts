/**
 * The PostgreSQL adapter: the shared conformance suite, then what only a store shared by several processes must
 * do — tested with several stores (each its own connection pool, as separate processes have) on one schema.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import type { EventDraft, Webhook } from '../../src/domain/types.ts';
import { openPostgresStore } from '../../src/store/open/postgres.ts';
import type { Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { webhookRecord } from '../support/records.ts';
import { catalogConformance } from './catalog-conformance.ts';
import { handOffConformance } from './hand-off-conformance.ts';
import { lidPhonesConformance } from './lid-phones-conformance.ts';
import { deliveryLogConformance } from './log-conformance.ts';
import { mediaJobsConformance } from './media-jobs-conformance.ts';
import { outcomeConformance } from './outcome-conformance.ts';
import { queueConformance } from './queue-conformance.ts';
import { routingConformance } from './routing-conformance.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const LEASE = 10_000;

if (postgresSkip) {
  test('store conformance: postgres', { skip: postgresSkip }, () => {});
} else {
  const schemas: string[] = [];
  after(async () => {
    for (const s of schemas) await dropSchema(s);
  });
  const open = async () => {
    const { schema, url } = await scratchSchema();
    schemas.push(schema);
    return openPostgresStore(url);
  };
  catalogConformance('postgres', open);
  queueConformance('postgres', open);
  handOffConformance('postgres', open);
  outcomeConformance('postgres', open);
  routingConformance('postgres', open);
  deliveryLogConformance('postgres', open);
  mediaJobsConformance('postgres', open);
  lidPhonesConformance('postgres', open);

  describe('postgres: several processes on one database', () => {
    let n = 0;
    const id = (prefix: string) => `${prefix}_shared${String(++n).padStart(20, '0')}`;

    /** `count` stores on one fresh schema, opened at the same moment (their migrations race). */
    async function stores(count: number): Promise<Store[]> {
      const { schema, url } = await scratchSchema();
      schemas.push(schema);
      const opened = await Promise.all(Array.from({ length: count }, () => openPostgresStore(url)));
      after(() => Promise.all(opened.map((s) => s.close())));
      return opened;
    }

    async function instanceWithWebhook(store: Store): Promise<{ ins: string; hook: Webhook }> {
      const ins = id('ins');
      await store.catalog.createInstance({
        instance_id: ins,
        name: 'x',
        status: 'STOPPED',
        phone: null,
        created_at: T0,
      });
      const hook = webhookRecord({ webhook_id: id('whk'), instance_id: ins }, T0);
      await store.webhooks.createWebhook(hook);
      return { ins, hook };
    }

    const draft = (ins: string, eventId = id('evt')): EventDraft => {
      const e = { event_id: eventId, event: 'presence.update', instance_id: ins, timestamp: T0, payload: {} };
      return { ...e, body: eventBody(e) };
    };

    test('migrations run once when several processes start at once', async () => {
      const [a, b, c] = await stores(3);
      const { ins } = await instanceWithWebhook(a);
      assert.equal((await c.catalog.getInstance(ins))?.instance_id, ins);
      await b.catalog.setSetting('probe', 'yes');
      assert.equal(await c.catalog.getSetting('probe'), 'yes');
    });

    test('the same event_id ingested through two stores at once is queued once', async () => {
      const [a, b] = await stores(2);
      const { ins } = await instanceWithWebhook(a);
      for (let round = 0; round < 20; round++) {
        const e = draft(ins);
        const [ra, rb] = await Promise.all([
          a.events.ingest(ins, [e], route, T0),
          b.events.ingest(ins, [e], route, T0),
        ]);
        assert.deepEqual(
          [ra[0].duplicate, rb[0].duplicate].sort(),
          [false, true],
          'one stored it, the other answered as a repeat',
        );
        assert.equal(ra[0].deliveries, 1);
        assert.equal(rb[0].deliveries, 1);
      }
      assert.equal((await a.log.listDeliveries(ins, { limit: 100 })).deliveries.length, 20);
    });

    test('the cap on webhooks per instance holds for creates through two stores at once', async () => {
      const [a, b] = await stores(2);
      const { ins } = await instanceWithWebhook(a);
      const created = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? a : b).webhooks.createWebhook(
            webhookRecord({ webhook_id: id('whk'), instance_id: ins }, T0),
            10,
          ),
        ),
      );
      assert.equal(created.filter(Boolean).length, 9, 'one was there before');
      assert.equal((await b.webhooks.listWebhooks(ins)).length, 10);
    });

    test('claims from several workers never lease one delivery twice', async () => {
      const workers = await stores(3);
      const { ins } = await instanceWithWebhook(workers[0]);
      await workers[0].events.ingest(
        ins,
        Array.from({ length: 300 }, () => draft(ins)),
        route,
        T0,
      );
      const claimed: ClaimedDelivery[] = [];
      await Promise.all(
        workers.map(async (w) => {
          for (;;) {
            const got = await w.claims.claimDue(T0, 7, LEASE, () => 1000);
            if (got.length === 0) return;
            claimed.push(...got);
          }
        }),
      );
      assert.equal(claimed.length, 300);
      assert.equal(new Set(claimed.map((c) => c.delivery_id)).size, 300);
    });

    test('the per-webhook cap counts the leases of the other workers', async () => {
      const [a, b] = await stores(2);
      const { ins, hook } = await instanceWithWebhook(a);
      await a.events.ingest(
        ins,
        Array.from({ length: 10 }, () => draft(ins)),
        route,
        T0,
      );
      const cap = 4;
      const room = (_: string, leased: number) => cap - leased;
      const [fromA, fromB] = await Promise.all([
        a.claims.claimDue(T0, 100, LEASE, room),
        b.claims.claimDue(T0, 100, LEASE, room),
      ]);
      assert.equal(fromA.length + fromB.length, cap, 'two workers together hold at most the cap');
      const seen: number[] = [];
      await b.claims.claimDue(T0 + 1, 100, LEASE, (w, leased) => {
        if (w === hook.webhook_id) seen.push(leased);
        return 0;
      });
      assert.deepEqual(seen, [fromA.length], "room is told what the other workers' leases hold");
      // Leases that ran out (their holder died) no longer count.
      const later = await b.claims.claimDue(T0 + LEASE, 100, LEASE, room);
      assert.equal(later.length, cap);
    });

    test('ingest and redelivery through one store wake a listener on another', async () => {
      const [api, worker] = await stores(2);
      const { ins } = await instanceWithWebhook(api);
      let wakes = 0;
      await worker.listenForWork(() => wakes++);
      const before = wakes;
      await api.events.ingest(ins, [draft(ins)], route, T0);
      await waitFor(() => wakes > before, 'a wake-up after ingest');
      const [c] = await worker.claims.claimDue(T0, 1, LEASE, () => 1);
      await worker.outcomes.recordAttempts(
        [
          {
            claim: c,
            outcome: {
              started_at: T0,
              duration_ms: 1,
              status_code: 500,
              error: null,
              response_body: 'no\0pe',
              retry_after: null,
            },
            decision: { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false },
          },
        ],
        T0,
      );
      const afterIngest = wakes;
      assert.equal((await api.log.redeliver(ins, c.delivery_id, T0 + 1))?.ok, true);
      await waitFor(() => wakes > afterIngest, 'a wake-up after redelivery');
    });
  });
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
