/**
 * Store conformance, outcomes: the rules both dialects apply from one SQL fragment each (store/sql-fragments.ts) — a late
 * result only becomes the last one when nothing later was recorded, and a webhook's failures in a row add up across
 * batches until a batch with a delivery starts them over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { Store } from '../../src/store/ports.ts';
import { LEASE, records, T0, unlimited } from './records.ts';

export function outcomeConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, outcomes: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);

    test('a late result older than the last one recorded is counted but leaves the last result as it is', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const mine = async (at: number) =>
        (await store.claims.claimDue(at, 100, LEASE, unlimited)).filter((c) => c.webhook_id === w.webhook_id);
      const [first] = await mine(T0);
      // The first holder's lease runs out; the second holder's attempt, started later, is recorded first.
      const [second] = await mine(T0 + LEASE);
      await store.outcomes.recordAttempts(
        [result(second, 503, { kind: 'retry', at: T0 + 10 * LEASE, reason: 'schedule' }, T0 + LEASE + 10)],
        T0 + LEASE + 20,
      );
      await store.outcomes.recordAttempts(
        [result(first, 200, { kind: 'delivered' }, T0 + LEASE - 5)],
        T0 + LEASE + 30,
      );
      const d = await store.log.getDelivery(ins, first.delivery_id);
      assert.deepEqual(
        [d?.status, d?.attempts, d?.last_status_code, d?.last_attempt_at],
        ['pending', 2, 503, T0 + LEASE + 10],
      );
      // A late result that is the latest does become the last one (still deciding nothing).
      await store.outcomes.recordAttempts(
        [
          result(
            first,
            404,
            { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false },
            T0 + LEASE + 40,
          ),
        ],
        T0 + LEASE + 50,
      );
      const again = await store.log.getDelivery(ins, first.delivery_id);
      assert.deepEqual(
        [again?.status, again?.attempts, again?.last_status_code, again?.last_attempt_at],
        ['pending', 3, 404, T0 + LEASE + 40],
      );
    });

    test("a webhook's failures in a row add up over batches; a batch with a delivery starts them over", async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const failures = async () =>
        (await store.health.webhookHealth(ins, T0))?.get(w.webhook_id)?.consecutive_failures;
      const batch = async (statuses: number[], at: number) => {
        await store.events.ingest(
          ins,
          statuses.map(() => draft(ins)),
          route,
          at,
        );
        const claims = (await store.claims.claimDue(at, 100, LEASE, unlimited)).filter(
          (c) => c.webhook_id === w.webhook_id,
        );
        assert.equal(claims.length, statuses.length);
        await store.outcomes.recordAttempts(
          claims.map((c, i) =>
            statuses[i] === 200
              ? result(c, 200, { kind: 'delivered' }, at + i)
              : result(c, statuses[i], { kind: 'retry', at: at + 10 * LEASE, reason: 'schedule' }, at + i),
          ),
          at + 100,
        );
      };
      await batch([500], T0);
      assert.equal(await failures(), 1);
      await batch([500, 500], T0 + 1000);
      assert.equal(await failures(), 3);
      await batch([500, 200, 500], T0 + 2000);
      assert.equal(await failures(), 1, 'the failure after the delivery');
      await batch([200], T0 + 3000);
      assert.equal(await failures(), 0);
    });
  });
}
