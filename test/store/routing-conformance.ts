/**
 * Store conformance, routing: each ingest goes to the webhooks as they are at that moment, whatever changed them in
 * between (an adapter may keep them in memory between ingests, as the embedded one does).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import { InstanceMissing } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/ports.ts';
import { records, T0 } from './records.ts';

export function routingConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, routing: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);

    test('every ingest sees the webhooks as they are now: created, changed, disabled, enabled, deleted', async () => {
      const ins = await instance();
      /** The webhooks the next event of this instance is delivered to. */
      const routed = async () => {
        const e = draft(ins);
        await store.events.ingest(ins, [e], route, T0);
        const { deliveries } = await store.log.listDeliveries(ins, { limit: 100, event_id: e.event_id });
        return deliveries.map((d) => d.webhook_id).sort();
      };
      const a = await webhook(ins);
      assert.deepEqual(await routed(), [a.webhook_id]);
      const b = await webhook(ins);
      assert.deepEqual(await routed(), [a.webhook_id, b.webhook_id].sort(), 'a new webhook');
      const config = {
        destination_url: b.destination_url,
        events: ['session.status'],
        ignore_status: true,
        secret: { kind: 'keep' } as const,
        filter: null,
        headers_sealed: null,
        rate_limit: null,
        standard_webhooks: false,
        ordering: 'none' as const,
        destination_sealed: null,
      };
      await store.webhooks.updateWebhook(ins, b.webhook_id, config, T0);
      assert.deepEqual(await routed(), [a.webhook_id], 'its events changed');
      await store.webhooks.setWebhookEnabled(ins, a.webhook_id, false, T0);
      assert.deepEqual(await routed(), [], 'disabled');
      await store.webhooks.setWebhookEnabled(ins, a.webhook_id, true, T0);
      assert.deepEqual(await routed(), [a.webhook_id], 'enabled again');
      await store.webhooks.deleteWebhook(ins, a.webhook_id);
      assert.deepEqual(await routed(), [], 'deleted');
    });

    test('a webhook disabled by a 410 and an instance deleted are seen by the next ingest', async () => {
      const ins = await instance();
      await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const [claim] = (await store.claims.claimDue(T0, 100, 10_000, () => 100)).filter(
        (c) => c.instance_id === ins,
      );
      await store.outcomes.recordAttempts(
        [result(claim, 410, { kind: 'failed', reason: 'gone', disableWebhook: true }, T0)],
        T0,
      );
      assert.equal((await store.events.ingest(ins, [draft(ins)], route, T0))[0].deliveries, 0, 'gone');
      await store.catalog.deleteInstance(ins);
      await assert.rejects(store.events.ingest(ins, [draft(ins)], route, T0), InstanceMissing);
    });
  });
}
