/** Store conformance, the catalog: instances, keys, webhooks, settings: every adapter must pass it. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { Webhook } from '../../src/domain/types.ts';
import type { Store } from '../../src/store/ports.ts';
import { webhookRecord } from '../support/records.ts';
import { LEASE, records, T0, uid, unlimited } from './records.ts';

export function catalogConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, the catalog: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft } = records(() => store);

    test('PATCH semantics of the secret: keep, set, clear', async () => {
      const ins = await instance();
      const w = await webhook(ins, { secret_sealed: 'sealed-1' });
      const config = {
        destination_url: 'https://example.org/x',
        events: ['message'],
        ignore_status: false,
        filter: null,
        headers_sealed: null,
        rate_limit: null,
        standard_webhooks: false,
        ordering: 'none' as const,
        destination_sealed: null,
      };
      assert.equal(
        (await store.webhooks.updateWebhook(ins, w.webhook_id, { ...config, secret: { kind: 'keep' } }, T0))
          ?.secret_sealed,
        'sealed-1',
      );
      assert.equal(
        (
          await store.webhooks.updateWebhook(
            ins,
            w.webhook_id,
            { ...config, secret: { kind: 'set', sealed: 's2' } },
            T0,
          )
        )?.secret_sealed,
        's2',
      );
      const cleared = await store.webhooks.updateWebhook(
        ins,
        w.webhook_id,
        { ...config, secret: { kind: 'clear' } },
        T0 + 1,
      );
      assert.deepEqual(
        [cleared?.secret_sealed, cleared?.destination_url, cleared?.updated_at],
        [null, 'https://example.org/x', T0 + 1],
      );
    });

    test('standard_webhooks is kept on create and PATCH, and every claim of the webhook carries it', async () => {
      const ins = await instance();
      const w = await webhook(ins, { standard_webhooks: true });
      assert.equal((await store.webhooks.getWebhook(ins, w.webhook_id))?.standard_webhooks, true);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const mine = async (at: number) =>
        (await store.claims.claimDue(at, 100, LEASE, unlimited)).filter((c) => c.webhook_id === w.webhook_id);
      assert.deepEqual(
        (await mine(T0)).map((c) => c.standard_webhooks),
        [true],
      );
      const config = {
        destination_url: w.destination_url,
        events: w.events,
        ignore_status: true,
        filter: null,
        headers_sealed: null,
        rate_limit: null,
        standard_webhooks: false,
        ordering: 'none' as const,
        destination_sealed: null,
        secret: { kind: 'keep' } as const,
      };
      assert.equal(
        (await store.webhooks.updateWebhook(ins, w.webhook_id, config, T0))?.standard_webhooks,
        false,
      );
      // The lease has run out: claimed again, now without.
      assert.deepEqual(
        (await mine(T0 + LEASE)).map((c) => c.standard_webhooks),
        [false],
      );
    });

    test('resealSecrets replaces every sealed secret and the setting at once, or nothing', async () => {
      const ins = await instance();
      const a = await webhook(ins, { secret_sealed: 'sealed-a' });
      const b = await webhook(ins, { secret_sealed: 'sealed-b' });
      const none = await webhook(ins);
      const secretOf = async (w: Webhook) =>
        (await store.webhooks.getWebhook(ins, w.webhook_id))?.secret_sealed;

      // A failure part-way leaves every secret and the setting as they were.
      await store.catalog.setSetting('reseal_check', 'old');
      await assert.rejects(
        store.catalog.resealSecrets(
          (s) => {
            if (s === 'sealed-b') throw new Error('cannot open');
            return `new:${s}`;
          },
          { name: 'reseal_check', value: 'new' },
        ),
        /cannot open/,
      );
      assert.deepEqual([await secretOf(a), await secretOf(b)], ['sealed-a', 'sealed-b']);
      assert.equal(await store.catalog.getSetting('reseal_check'), 'old');

      const seen: string[] = [];
      const count = await store.catalog.resealSecrets(
        (s) => {
          seen.push(s);
          return `new:${s}`;
        },
        { name: 'reseal_check', value: 'new' },
      );
      assert.equal(count, seen.length);
      assert.ok(seen.includes('sealed-a') && seen.includes('sealed-b'));
      assert.ok(!seen.includes(null as unknown as string), 'webhooks without a secret are left alone');
      assert.deepEqual(
        [await secretOf(a), await secretOf(b), await secretOf(none)],
        ['new:sealed-a', 'new:sealed-b', null],
      );
      assert.equal(await store.catalog.getSetting('reseal_check'), 'new');
    });

    test('creates at once never go past the cap on webhooks per instance', async () => {
      const ins = await instance();
      const other = await instance();
      await webhook(other);
      const created = await Promise.all(
        Array.from({ length: 30 }, () =>
          store.webhooks.createWebhook(webhookRecord({ webhook_id: uid('whk'), instance_id: ins }, T0), 10),
        ),
      );
      assert.equal(created.filter(Boolean).length, 10);
      assert.equal((await store.webhooks.listWebhooks(ins)).length, 10);
      assert.equal(
        await store.webhooks.createWebhook(
          webhookRecord({ webhook_id: uid('whk'), instance_id: other }, T0),
          2,
        ),
        true,
        'another instance has its own count',
      );
    });

    test('deleting an instance removes its webhooks, keys, events and deliveries', async () => {
      const ins = await instance();
      await webhook(ins);
      await store.catalog.createKey({
        key_id: uid('key'),
        instance_id: ins,
        key_hash: uid('hash'),
        scope: 'manage',
        created_at: T0,
      });
      await store.events.ingest(ins, [draft(ins)], route, T0);
      assert.equal(await store.catalog.deleteInstance(ins), true);
      assert.equal(await store.catalog.getInstance(ins), null);
      assert.deepEqual(await store.webhooks.listWebhooks(ins), []);
      assert.deepEqual(await store.catalog.listKeys(ins), []);
      assert.equal((await store.log.listDeliveries(ins, { limit: 10 })).deliveries.length, 0);
      assert.equal(await store.catalog.deleteInstance(ins), false);
    });
  });
}
