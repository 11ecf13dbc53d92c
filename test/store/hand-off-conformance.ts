/**
 * Store conformance, the hand-off: fresh deliveries within the room the caller gives ingest are leased as a claim
 * would lease them and returned with their event's result once stored, never woken for, and due again if whoever
 * took them never answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import { StoreConflict } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery, HandOffRoom, IngestResult } from '../../src/store/records.ts';
import { eventually } from '../support/herald.ts';
import { LEASE, records, T0, unlimited } from './records.ts';

/** The room for each given webhook. */
const roomFor = (room: Record<string, number>): HandOffRoom => ({
  leaseMs: LEASE,
  room: new Map(Object.entries(room)),
});
/** What ingest handed off, over all results. */
const handedOff = (results: IngestResult[]): ClaimedDelivery[] => results.flatMap((r) => r.handedOff ?? []);

export function handOffConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, the hand-off: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);
    /** This instance's deliveries among a claim's (other cases leave theirs due). */
    const claimed = async (ins: string, at: number) =>
      (await store.claims.claimDue(at, 1000, LEASE, unlimited)).filter((c) => c.instance_id === ins);

    test('what is handed off is returned leased: a claim passes it by, its outcome decides it, the rest stay due', async () => {
      const ins = await instance();
      const [a, b] = [await webhook(ins), await webhook(ins)];
      const events = [draft(ins), draft(ins)];
      const results = await store.events.ingest(ins, events, route, T0, roomFor({ [a.webhook_id]: 1 }));
      assert.deepEqual(results[1].handedOff, undefined, 'the room was used up by the first event');
      const taken = handedOff(results);
      const [claim] = taken;
      assert.deepEqual(
        [taken.length, claim.webhook_id, claim.event_id, claim.body, claim.attempt, claim.cycle_attempt],
        [1, a.webhook_id, events[0].event_id, events[0].body, 1, 1],
      );
      assert.equal(claim.destination_url, a.destination_url);
      const due = await claimed(ins, T0);
      assert.deepEqual(
        due.map((c) => [c.webhook_id, c.event_id]).sort(),
        [
          [a.webhook_id, events[1].event_id],
          [b.webhook_id, events[0].event_id],
          [b.webhook_id, events[1].event_id],
        ].sort(),
        'every delivery but the one taken is claimed',
      );
      await store.outcomes.recordAttempts([result(claim, 200, { kind: 'delivered' }, T0)], T0);
      const log = await store.log.listDeliveries(ins, { limit: 10, status: 'delivered' });
      assert.deepEqual(
        log.deliveries.map((d) => d.delivery_id),
        [claim.delivery_id],
      );
    });

    test('a delivery taken by a process that never answers is due again once its lease runs out', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const [claim] = handedOff(
        await store.events.ingest(ins, [draft(ins)], route, T0, roomFor({ [w.webhook_id]: 10 })),
      );
      assert.deepEqual(await claimed(ins, T0 + LEASE - 1), [], 'held while its lease lasts');
      const [again] = await claimed(ins, T0 + LEASE + 1);
      assert.equal(again?.delivery_id, claim.delivery_id);
      // The lost lease decides nothing; the one holding it now does.
      await store.outcomes.recordAttempts(
        [result(claim, 200, { kind: 'delivered' }, T0 + LEASE + 2)],
        T0 + LEASE + 2,
      );
      assert.equal((await store.log.listDeliveries(ins, { limit: 1 })).deliveries[0].status, 'pending');
      await store.outcomes.recordAttempts(
        [result(again, 200, { kind: 'delivered' }, T0 + LEASE + 3)],
        T0 + LEASE + 3,
      );
      assert.equal((await store.log.listDeliveries(ins, { limit: 1 })).deliveries[0].status, 'delivered');
    });

    test('nothing is handed off of an event whose media is still to come, nor to a rate-limited webhook', async () => {
      const ins = await instance();
      const limited = await webhook(ins, { rate_limit: 5 });
      const plain = await webhook(ins);
      const room = roomFor({ [limited.webhook_id]: 10, [plain.webhook_id]: 10 });
      const download = { url: 'https://engine.example/f.jpg', mimetype: 'image/jpeg', filename: null };
      const taken = [
        ...handedOff(await store.events.ingest(ins, [draft(ins, { download })], route, T0, room)),
        ...handedOff(await store.events.ingest(ins, [draft(ins)], route, T0, room)),
      ];
      assert.deepEqual(
        taken.map((c) => c.webhook_id === limited.webhook_id),
        [false],
        'only the plain webhook, and only the event without media',
      );
    });

    test('a refused ingest hands nothing over', async () => {
      const [a, b] = [await instance(), await instance()];
      await webhook(b);
      const e = draft(a);
      await store.events.ingest(a, [e], route, T0);
      const [hook] = await store.webhooks.listWebhooks(b);
      const refused = store.events.ingest(
        b,
        [draft(b), { ...e, instance_id: b }],
        route,
        T0,
        roomFor({ [hook.webhook_id]: 10 }),
      );
      await assert.rejects(refused, StoreConflict);
      assert.deepEqual(await claimed(b, T0 + LEASE + 1), [], 'nothing of it was stored, leased or not');
    });

    test('a listener is woken for deliveries left due, not for the ones taken', async () => {
      const ins = await instance();
      const [a, b] = [await webhook(ins), await webhook(ins)];
      let wakes = 0;
      await store.listenForWork(() => wakes++);
      const ingestWith = (room: Record<string, number>) =>
        store.events.ingest(ins, [draft(ins)], route, T0, roomFor(room));
      const before = wakes;
      await ingestWith({ [a.webhook_id]: 10, [b.webhook_id]: 10 });
      await ingestWith({ [a.webhook_id]: 10 });
      // Wake-ups come in commit order: one for the first ingest would come before the second's.
      await eventually(
        async () => (wakes > before ? true : undefined),
        5000,
        `a wake-up for ${b.webhook_id}`,
      );
      assert.equal(wakes - before, 1, 'the ingest whose deliveries were all taken woke nobody');
    });
  });
}
