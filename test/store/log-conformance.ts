/** Store conformance, the delivery log: pages, redelivery, counts: every adapter must pass it. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { Store } from '../../src/store/ports.ts';
import { LEASE, records, T0, unlimited } from './records.ts';

export function deliveryLogConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, the delivery log: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);

    test('redelivery: only failed deliveries of enabled webhooks, a fresh manual cycle', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const [c] = await store.claims.claimDue(T0, 1, LEASE, (id) => (id === w.webhook_id ? 1 : 0));
      assert.equal((await store.log.redeliver(ins, c.delivery_id, T0))?.ok, false, 'pending is a conflict');
      await store.outcomes.recordAttempts(
        [result(c, 500, { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false }, T0)],
        T0,
      );
      await store.webhooks.setWebhookEnabled(ins, w.webhook_id, false, T0);
      assert.match(JSON.stringify(await store.log.redeliver(ins, c.delivery_id, T0)), /disabled/);
      await store.webhooks.setWebhookEnabled(ins, w.webhook_id, true, T0);
      const r = await store.log.redeliver(ins, c.delivery_id, T0 + 1);
      assert.ok(r?.ok);
      assert.deepEqual(
        [r.delivery.status, r.delivery.next_attempt_at, r.delivery.failure_reason],
        ['pending', T0 + 1, null],
      );
      const again = (await store.claims.claimDue(T0 + 1, 100, LEASE, unlimited)).find(
        (x) => x.delivery_id === c.delivery_id,
      );
      assert.deepEqual([again?.trigger, again?.cycle_attempt, again?.attempt], ['manual', 1, 2]);
      assert.equal(await store.log.redeliver(ins, 'dlv_unknown0000000000000000', T0), null);
    });

    test('bulk redelivery counts failed deliveries of enabled webhooks in the range', async () => {
      const ins = await instance();
      const on = await webhook(ins);
      const off = await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      await store.events.ingest(ins, [draft(ins)], route, T0 + 1000);
      await store.webhooks.setWebhookEnabled(ins, on.webhook_id, false, T0 + 2000);
      await store.webhooks.setWebhookEnabled(ins, off.webhook_id, false, T0 + 2000);
      await store.webhooks.setWebhookEnabled(ins, on.webhook_id, true, T0 + 3000);
      assert.equal(await store.log.redeliverFailed(ins, { since: T0 + 500 }, T0 + 4000), 1);
      assert.equal(await store.log.redeliverFailed(ins, { webhook_id: on.webhook_id }, T0 + 4000), 1);
      assert.equal(await store.log.redeliverFailed(ins, {}, T0 + 4000), 0);
    });

    test('instance counts: webhooks, failed deliveries, and exactly what bulk redelivery would restart', async () => {
      const ins = await instance();
      const other = await instance();
      const on = await webhook(ins);
      const off = await webhook(ins);
      await webhook(ins, { enabled: false });
      await store.events.ingest(ins, [draft(ins), draft(ins)], route, T0);
      // Disabling fails pending deliveries; re-enabling one webhook makes its failures redeliverable.
      await store.webhooks.setWebhookEnabled(ins, on.webhook_id, false, T0 + 1);
      await store.webhooks.setWebhookEnabled(ins, off.webhook_id, false, T0 + 1);
      await store.webhooks.setWebhookEnabled(ins, on.webhook_id, true, T0 + 2);
      const counts = await store.log.instanceCounts(ins);
      assert.deepEqual(counts.get(ins), { webhooks: 3, failed_deliveries: 4, redeliverable_deliveries: 2 });
      assert.equal(counts.has(other), false, 'one instance asked, one answered');
      assert.deepEqual((await store.log.instanceCounts()).get(ins), counts.get(ins));
      assert.equal(
        await store.log.redeliverFailed(ins, {}, T0 + 3),
        2,
        'the count promised is the count done',
      );
      assert.deepEqual((await store.log.instanceCounts(ins)).get(ins), {
        webhooks: 3,
        failed_deliveries: 2,
        redeliverable_deliveries: 0,
      });
    });

    test('the log pages newest first, filters, and a cursor walks every delivery once', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const drafts = Array.from({ length: 7 }, (_, i) =>
        draft(ins, i % 2 ? { event: 'presence.update', payload: {} } : {}),
      );
      await store.events.ingest(ins, drafts, route, T0);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.log.listDeliveries(ins, { limit: 3, cursor });
        seen.push(...page.deliveries.map((d) => d.event_id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, drafts.map((d) => d.event_id).reverse());
      const presence = await store.log.listDeliveries(ins, {
        limit: 10,
        event: 'presence.update',
        webhook_id: w.webhook_id,
      });
      assert.equal(presence.deliveries.length, 3);
      const one = await store.log.listDeliveries(ins, { limit: 10, event_id: drafts[4].event_id });
      assert.deepEqual(
        one.deliveries.map((d) => d.event_id),
        [drafts[4].event_id],
      );
      assert.equal(
        (await store.log.listDeliveries(ins, { limit: 10, status: 'delivered' })).deliveries.length,
        0,
      );
    });
  });
}
