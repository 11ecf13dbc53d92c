/**
 * Store conformance, the intake: fresh deliveries that a dispatcher of the process takes at ingest are leased to it
 * as a claim would lease them, handed over only once stored, never woken for, and due again if it never answers.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { ClaimedDelivery, Intake, Store } from '../../src/store/store.ts';
import { StoreConflict } from '../../src/store/store.ts';
import { eventually } from '../support/herald.ts';
import { LEASE, records, T0, unlimited } from './records.ts';

/** An intake that takes `room(webhook_id)` of each webhook's fresh deliveries, and records what it was given. */
function intake(room: (webhookId: string) => number) {
  const asked: string[] = [];
  const taken: ClaimedDelivery[][] = [];
  const it: Intake = {
    leaseMs: LEASE,
    room: (webhookId) => {
      asked.push(webhookId);
      return room(webhookId);
    },
    take: (claims) => {
      taken.push(claims);
    },
  };
  return { it, asked, taken };
}

export function intakeConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, the intake: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);
    /** This instance's deliveries among a claim's (other cases leave theirs due). */
    const claimed = async (ins: string, at: number) =>
      (await store.claimDue(at, 1000, LEASE, unlimited)).filter((c) => c.instance_id === ins);

    test('what the intake takes is handed over leased: a claim passes it by, its outcome decides it, the rest stay due', async () => {
      const ins = await instance();
      const [a, b] = [await webhook(ins), await webhook(ins)];
      const { it, asked, taken } = intake((w) => (w === a.webhook_id ? 1 : 0));
      store.setIntake(it);
      const events = [draft(ins), draft(ins)];
      try {
        await store.ingest(ins, events, route, T0);
      } finally {
        store.setIntake(null);
      }
      assert.deepEqual(asked.sort(), [a.webhook_id, b.webhook_id].sort(), 'asked once per webhook in a turn');
      assert.equal(taken.length, 1);
      const [claim] = taken[0];
      assert.deepEqual(
        [taken[0].length, claim.webhook_id, claim.event_id, claim.body, claim.attempt, claim.cycle_attempt],
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
      await store.recordAttempts([result(claim, 200, { kind: 'delivered' }, T0)], T0);
      const log = await store.listDeliveries(ins, { limit: 10, status: 'delivered' });
      assert.deepEqual(
        log.deliveries.map((d) => d.delivery_id),
        [claim.delivery_id],
      );
    });

    test('a delivery taken by a process that never answers is due again once its lease runs out', async () => {
      const ins = await instance();
      await webhook(ins);
      const { it, taken } = intake(() => 10);
      store.setIntake(it);
      try {
        await store.ingest(ins, [draft(ins)], route, T0);
      } finally {
        store.setIntake(null);
      }
      const [[claim]] = taken;
      assert.deepEqual(await claimed(ins, T0 + LEASE - 1), [], 'held while its lease lasts');
      const [again] = await claimed(ins, T0 + LEASE + 1);
      assert.equal(again?.delivery_id, claim.delivery_id);
      // The lost lease decides nothing; the one holding it now does.
      await store.recordAttempts([result(claim, 200, { kind: 'delivered' }, T0 + LEASE + 2)], T0 + LEASE + 2);
      assert.equal((await store.listDeliveries(ins, { limit: 1 })).deliveries[0].status, 'pending');
      await store.recordAttempts([result(again, 200, { kind: 'delivered' }, T0 + LEASE + 3)], T0 + LEASE + 3);
      assert.equal((await store.listDeliveries(ins, { limit: 1 })).deliveries[0].status, 'delivered');
    });

    test('nothing is offered of an event whose media is still to come, nor to a rate-limited webhook', async () => {
      const ins = await instance();
      const limited = await webhook(ins, { rate_limit: 5 });
      await webhook(ins);
      const { it, asked, taken } = intake(() => 10);
      store.setIntake(it);
      try {
        const download = { url: 'https://engine.example/f.jpg', mimetype: 'image/jpeg', filename: null };
        await store.ingest(ins, [draft(ins, { download })], route, T0);
        await store.ingest(ins, [draft(ins)], route, T0);
      } finally {
        store.setIntake(null);
      }
      assert.ok(!asked.includes(limited.webhook_id), 'the rate-limited webhook is never asked');
      assert.deepEqual(
        taken.flat().map((c) => c.webhook_id === limited.webhook_id),
        [false],
        'only the plain webhook, and only the event without media',
      );
    });

    test('a refused ingest hands nothing over', async () => {
      const [a, b] = [await instance(), await instance()];
      await webhook(b);
      const e = draft(a);
      await store.ingest(a, [e], route, T0);
      const { it, taken } = intake(() => 10);
      store.setIntake(it);
      try {
        await assert.rejects(store.ingest(b, [draft(b), { ...e, instance_id: b }], route, T0), StoreConflict);
      } finally {
        store.setIntake(null);
      }
      assert.deepEqual(taken, []);
    });

    test('a listener is woken for deliveries left due, not for the ones taken', async () => {
      const ins = await instance();
      const [a, b] = [await webhook(ins), await webhook(ins)];
      let wakes = 0;
      await store.listenForWork(() => wakes++);
      const ingestWith = async (room: (w: string) => number) => {
        store.setIntake(intake(room).it);
        try {
          await store.ingest(ins, [draft(ins)], route, T0);
        } finally {
          store.setIntake(null);
        }
      };
      const before = wakes;
      await ingestWith(() => 10);
      await ingestWith((w) => (w === a.webhook_id ? 10 : 0));
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
