/** Store conformance, the queue: ingest, claims, leases, outcomes: every adapter must pass it. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { EventDraft } from '../../src/domain/types.ts';
import { InstanceMissing, StoreConflict } from '../../src/store/errors.ts';
import type { Store } from '../../src/store/ports.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';
import { LEASE, records, T0, uid, unlimited } from './records.ts';

export function queueConformance(name: string, open: () => Promise<Store>): void {
  describe(`store conformance, the queue: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());
    const { instance, webhook, draft, result } = records(() => store);

    test('ingest stores an event with one delivery per routed webhook, and a repeat is answered the same', async () => {
      const ins = await instance();
      await webhook(ins);
      await webhook(ins);
      await webhook(ins, { enabled: false });
      const e = draft(ins);
      const [first] = await store.events.ingest(ins, [e], route, T0);
      assert.deepEqual(first, { event_id: e.event_id, deliveries: 2, duplicate: false });
      const [again] = await store.events.ingest(ins, [{ ...e, payload: { changed: true } }], route, T0 + 1);
      assert.deepEqual(again, { event_id: e.event_id, deliveries: 2, duplicate: true });
      const page = await store.log.listDeliveries(ins, { limit: 10 });
      assert.equal(page.deliveries.length, 2);
    });

    test('an event_id repeated within one call is stored once, the repeat answered as a duplicate', async () => {
      const ins = await instance();
      await webhook(ins);
      const e = draft(ins);
      const results = await store.events.ingest(
        ins,
        [e, draft(ins), { ...e, payload: { other: true } }],
        route,
        T0,
      );
      assert.deepEqual(
        results.map((r) => [r.event_id === e.event_id, r.deliveries, r.duplicate]),
        [
          [true, 1, false],
          [false, 1, false],
          [true, 1, true],
        ],
      );
      assert.equal((await store.log.listDeliveries(ins, { limit: 10 })).deliveries.length, 2);
    });

    test('an event_id of another instance is a conflict and nothing of the call is stored', async () => {
      const a = await instance();
      const b = await instance();
      await webhook(b);
      const e = draft(a);
      await store.events.ingest(a, [e], route, T0);
      await assert.rejects(
        store.events.ingest(b, [draft(b), { ...e, instance_id: b }], route, T0),
        StoreConflict,
      );
      assert.equal((await store.log.listDeliveries(b, { limit: 10 })).deliveries.length, 0);
    });

    test('an ingest for an instance that does not exist, or no longer does, stores nothing; others at once are stored', async () => {
      const gone = await instance();
      await webhook(gone);
      assert.equal(await store.catalog.deleteInstance(gone), true);
      const live = await instance();
      await webhook(live);
      const [missing, deleted, stored] = await Promise.allSettled([
        store.events.ingest('ins_neverCreated0000000000', [draft('ins_neverCreated0000000000')], route, T0),
        store.events.ingest(gone, [draft(gone)], route, T0),
        store.events.ingest(live, [draft(live)], route, T0),
      ]);
      assert.ok(missing.status === 'rejected' && missing.reason instanceof InstanceMissing, String(missing));
      assert.ok(deleted.status === 'rejected' && deleted.reason instanceof InstanceMissing, String(deleted));
      assert.equal(stored.status, 'fulfilled');
      assert.equal((await store.log.listDeliveries(live, { limit: 10 })).deliveries.length, 1);
    });

    test('concurrent ingests: one that conflicts fails alone, the others are stored whole', async () => {
      const a = await instance();
      const b = await instance();
      await webhook(b);
      const taken = draft(a);
      await store.events.ingest(a, [taken], route, T0);
      const [first, conflicting, last] = await Promise.allSettled([
        store.events.ingest(b, [draft(b), draft(b)], route, T0),
        store.events.ingest(b, [draft(b), { ...taken, instance_id: b }], route, T0),
        store.events.ingest(b, [draft(b)], route, T0),
      ]);
      assert.equal(first.status, 'fulfilled');
      assert.ok(conflicting.status === 'rejected' && conflicting.reason instanceof StoreConflict);
      assert.equal(last.status, 'fulfilled');
      assert.equal((await store.log.listDeliveries(b, { limit: 10 })).deliveries.length, 3);
    });

    test("one event_id in calls at once: stored once; another instance's call with it fails alone", async () => {
      const a = await instance();
      const b = await instance();
      await webhook(a);
      await webhook(b);
      const e = draft(a);
      const [first, again, elsewhere, other] = await Promise.allSettled([
        store.events.ingest(a, [e], route, T0),
        store.events.ingest(a, [{ ...e, payload: { again: true } }], route, T0),
        store.events.ingest(b, [draft(b), { ...e, instance_id: b }], route, T0),
        store.events.ingest(b, [draft(b)], route, T0),
      ]);
      assert.deepEqual(first.status === 'fulfilled' && first.value, [
        { event_id: e.event_id, deliveries: 1, duplicate: false },
      ]);
      assert.deepEqual(again.status === 'fulfilled' && again.value, [
        { event_id: e.event_id, deliveries: 1, duplicate: true },
      ]);
      assert.ok(
        elsewhere.status === 'rejected' && elsewhere.reason instanceof StoreConflict,
        String(elsewhere),
      );
      assert.equal(other.status, 'fulfilled');
      assert.equal((await store.log.listDeliveries(a, { limit: 10 })).deliveries.length, 1);
      assert.equal((await store.log.listDeliveries(b, { limit: 10 })).deliveries.length, 1);
    });

    test('session.status in calls at once: each instance takes its own newest', async () => {
      const a = await instance();
      const b = await instance();
      const status = (ins: string, s: string, phone: string, at: number) =>
        draft(ins, { event: 'session.status', payload: { status: s, phone }, timestamp: at });
      await Promise.all([
        store.events.ingest(a, [status(a, 'WORKING', '3', T0 + 2)], route, T0),
        store.events.ingest(b, [status(b, 'WORKING', '2', T0 + 1)], route, T0),
        store.events.ingest(a, [status(a, 'STARTING', '1', T0 + 1)], route, T0),
      ]);
      const [gotA, gotB] = [await store.catalog.getInstance(a), await store.catalog.getInstance(b)];
      assert.deepEqual([gotA?.status, gotA?.phone], ['WORKING', '3']);
      assert.deepEqual([gotB?.status, gotB?.phone], ['WORKING', '2']);
    });

    test('a session.status stored after a newer one changes nothing; at the same time the greater event_id wins', async () => {
      const ins = await instance();
      const status = (s: string, at: number, event_id: string, phone?: string) =>
        draft(ins, { event_id, event: 'session.status', payload: { status: s, phone }, timestamp: at });
      const shown = async () => {
        const got = await store.catalog.getInstance(ins);
        return [got?.status, got?.phone];
      };
      await store.events.ingest(ins, [status('WORKING', T0 + 10, uid('evt'), '4917')], route, T0);
      await store.events.ingest(ins, [status('STARTING', T0 + 5, uid('evt'))], route, T0);
      assert.deepEqual(await shown(), ['WORKING', '4917'], 'an older one, stored last');
      // In one call, as one turn: the newest of them, whatever their order.
      await store.events.ingest(
        ins,
        [status('STOPPED', T0 + 30, uid('evt')), status('FAILED', T0 + 20, uid('evt'))],
        route,
        T0,
      );
      assert.deepEqual(await shown(), ['STOPPED', null], 'the newest of one call, without a phone: none');
      const id = uid('evt');
      await store.events.ingest(ins, [status('WORKING', T0 + 30, `${id}b`, '4917')], route, T0);
      await store.events.ingest(ins, [status('SCAN_QR_CODE', T0 + 30, `${id}a`)], route, T0);
      assert.deepEqual(await shown(), ['WORKING', '4917'], 'a tie: the greater event_id, stored first');
    });

    test('session.status sets the instance status and phone', async () => {
      const ins = await instance();
      await store.events.ingest(
        ins,
        [draft(ins, { event: 'session.status', payload: { status: 'WORKING', phone: '4917' } })],
        route,
        T0,
      );
      const got = await store.catalog.getInstance(ins);
      assert.equal(got?.status, 'WORKING');
      assert.equal(got?.phone, '4917');
    });

    test("a claim brings its event's stored trace context (null for an event stored without one)", async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const traced = {
        ...draft(ins),
        trace_context: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      };
      const plain = draft(ins);
      await store.events.ingest(ins, [traced, plain], route, T0);
      const mine = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      assert.deepEqual(
        new Map(mine.map((c) => [c.event_id, c.trace_context])),
        new Map([
          [traced.event_id, traced.trace_context],
          [plain.event_id, null],
        ]),
      );
    });

    test('a claimed delivery is leased: not claimable again until the lease runs out', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const e = draft(ins);
      await store.events.ingest(ins, [e], route, T0);
      const mine = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      assert.equal(mine.length, 1);
      assert.equal(
        mine[0].body,
        JSON.stringify({
          event_id: e.event_id,
          event: e.event,
          instance_id: ins,
          timestamp: T0,
          payload: e.payload,
        }),
      );
      assert.deepEqual([mine[0].attempt, mine[0].cycle_attempt, mine[0].trigger], [1, 1, 'scheduled']);
      const during = await store.claims.claimDue(T0 + LEASE - 1, 100, LEASE, unlimited);
      assert.ok(!during.some((c) => c.delivery_id === mine[0].delivery_id));
      const afterLease = await store.claims.claimDue(T0 + LEASE, 100, LEASE, unlimited);
      const retaken = afterLease.find((c) => c.delivery_id === mine[0].delivery_id);
      assert.ok(retaken, 'claimable again once the holder is presumed dead');
      // The first holder's late result is logged and counted; the second holder's decides.
      await store.outcomes.recordAttempts(
        [result(mine[0], 500, { kind: 'retry', at: T0 + 99_999, reason: 'schedule' }, T0 + LEASE + 1)],
        T0,
      );
      await store.outcomes.recordAttempts([result(retaken, 200, { kind: 'delivered' }, T0 + LEASE + 2)], T0);
      const detail = await store.log.getDelivery(ins, retaken.delivery_id);
      assert.equal(detail?.status, 'delivered');
      assert.equal(detail?.attempts_log.length, 2);
      assert.deepEqual([detail?.attempts, detail?.last_status_code], [2, 200]);
    });

    test('an attempt recorded after its webhook was disabled is logged and counted, and decides nothing', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const [claim] = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      await store.webhooks.setWebhookEnabled(ins, w.webhook_id, false, T0 + 1);
      await store.outcomes.recordAttempts(
        [result(claim, 429, { kind: 'retry', at: T0 + 60_000, reason: 'retry-after' }, T0)],
        T0 + 2,
      );
      const d = await store.log.getDelivery(ins, claim.delivery_id);
      assert.deepEqual(
        [
          d?.status,
          d?.failure_reason,
          d?.next_attempt_at,
          d?.attempts,
          d?.last_status_code,
          d?.last_attempt_at,
        ],
        ['failed', 'webhook_disabled', null, 1, 429, T0],
      );
      assert.deepEqual(
        d?.attempts_log.map((a) => a.status_code),
        [429],
      );
    });

    test('an attempt on a delivery deleted meanwhile does not stop the rest of the batch being recorded', async () => {
      const ins = await instance();
      const gone = await webhook(ins);
      const kept = await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const claims = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.instance_id === ins,
      );
      assert.equal(claims.length, 2);
      await store.webhooks.deleteWebhook(ins, gone.webhook_id);
      await store.outcomes.recordAttempts(
        claims.map((c) => result(c, 200, { kind: 'delivered' }, T0)),
        T0,
      );
      const [d] = (await store.log.listDeliveries(ins, { limit: 10 })).deliveries;
      assert.deepEqual([d.webhook_id, d.status], [kept.webhook_id, 'delivered']);
    });

    test('a backlog claimed a few at a time: each due delivery once, oldest first; leases that ran out are found', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      const events = Array.from({ length: 13 }, () => draft(ins));
      for (const [i, e] of events.entries()) await store.events.ingest(ins, [e], route, T0 + i);
      const room = (n: number) => (id: string) => (id === w.webhook_id ? n : 0);
      const mine = (claims: ClaimedDelivery[]) => claims.filter((c) => c.webhook_id === w.webhook_id);
      const order = (claims: ClaimedDelivery[]) =>
        claims.map((c) => events.findIndex((e) => e.event_id === c.event_id));
      const now = T0 + 10;
      const batches: ClaimedDelivery[][] = [];
      for (let i = 0; i < 4; i++)
        batches.push(mine(await store.claims.claimDue(now + i, 100, LEASE, room(3))));
      assert.deepEqual(batches.map(order), [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [9, 10, 11],
      ]);
      // All but the first batch are answered; the first batch's holder never answers, so its leases run out, and
      // they are found although later deliveries were claimed since.
      await store.outcomes.recordAttempts(
        batches
          .slice(1)
          .flat()
          .map((c) => result(c, 200, { kind: 'delivered' }, now + 6)),
        now + 6,
      );
      const later = now + LEASE;
      assert.deepEqual(order(mine(await store.claims.claimDue(later, 100, LEASE, room(10)))), [0, 1, 2, 12]);
      assert.equal(mine(await store.claims.claimDue(later, 100, LEASE, room(10))).length, 0);
    });

    test('claims respect the room left per webhook', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins), draft(ins), draft(ins)], route, T0);
      const claims = await store.claims.claimDue(T0, 100, LEASE, (id) => (id === w.webhook_id ? 2 : 1000));
      assert.equal(claims.filter((c) => c.webhook_id === w.webhook_id).length, 2);
    });

    test('a claim asks for room only of webhooks with a delivery due now', async () => {
      const ins = await instance();
      const now = await webhook(ins, { events: ['message.ack'] });
      const later = await webhook(ins, { events: ['message.reaction'] });
      const idle = await webhook(ins, { events: ['message.revoked'] });
      await store.events.ingest(ins, [draft(ins, { event: 'message.reaction' })], route, T0);
      const [first] = await store.claims.claimDue(T0, 100, LEASE, (id) => (id === later.webhook_id ? 1 : 0));
      await store.outcomes.recordAttempts(
        [result(first, 500, { kind: 'retry', at: T0 + 5000, reason: 'schedule' }, T0)],
        T0,
      );
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const asked: string[] = [];
      const claims = await store.claims.claimDue(T0 + 1, 100, LEASE, (id) => {
        asked.push(id);
        return 1000;
      });
      assert.ok(asked.includes(now.webhook_id));
      assert.ok(claims.some((c) => c.webhook_id === now.webhook_id));
      // Not asked, so not claimed either: one retrying later, one with nothing pending at all.
      assert.deepEqual(
        asked.filter((id) => id === later.webhook_id || id === idle.webhook_id),
        [],
      );
    });

    test('outcomes: retry sets the due time, failure and delivery end the delivery', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins), draft(ins)], route, T0);
      const [a, b] = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      await store.outcomes.recordAttempts(
        [
          result(a, 500, { kind: 'retry', at: T0 + 5000, reason: 'schedule' }, T0),
          result(b, 500, { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false }, T0),
        ],
        T0,
      );
      const da = await store.log.getDelivery(ins, a.delivery_id);
      assert.deepEqual(
        [da?.status, da?.next_attempt_at, da?.attempts, da?.last_status_code],
        ['pending', T0 + 5000, 1, 500],
      );
      assert.equal(da?.attempts_log[0].next_attempt_reason, 'schedule');
      const db = await store.log.getDelivery(ins, b.delivery_id);
      assert.deepEqual(
        [db?.status, db?.failure_reason, db?.next_attempt_at],
        ['failed', 'attempts_exhausted', null],
      );
      assert.ok(
        !(await store.claims.claimDue(T0 + 4999, 100, LEASE, unlimited)).some(
          (c) => c.delivery_id === a.delivery_id,
        ),
      );
      const next = (await store.claims.claimDue(T0 + 5000, 100, LEASE, unlimited)).find(
        (c) => c.delivery_id === a.delivery_id,
      );
      assert.deepEqual([next?.attempt, next?.cycle_attempt], [2, 2]);
    });

    test('a 410 disables the webhook and fails its other pending deliveries', async () => {
      const ins = await instance();
      const w = await webhook(ins);
      await store.events.ingest(ins, [draft(ins), draft(ins)], route, T0);
      const [a] = (await store.claims.claimDue(T0, 1, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      await store.outcomes.recordAttempts(
        [result(a, 410, { kind: 'failed', reason: 'gone', disableWebhook: true }, T0)],
        T0,
      );
      const hook = await store.webhooks.getWebhook(ins, w.webhook_id);
      assert.deepEqual([hook?.enabled, hook?.disabled_reason, hook?.disabled_at], [false, 'gone', T0]);
      const reasons = (await store.log.listDeliveries(ins, { limit: 10 })).deliveries
        .map((d) => d.failure_reason)
        .sort();
      assert.deepEqual(reasons, ['gone', 'webhook_disabled']);
      assert.equal(
        (await store.events.ingest(ins, [draft(ins)], route, T0))[0].deliveries,
        0,
        'nothing queued while disabled',
      );
    });

    test('work queued by ingest and by redelivery wakes a listener, once committed', async () => {
      const ins = await instance();
      await webhook(ins);
      let wake = () => {};
      await store.listenForWork(() => wake());
      /** Runs `action`, waits for the wake-up it causes, and claims at once: woken means the work is visible. */
      const wokenBy = async (action: () => Promise<unknown>, at: number) => {
        const woken = new Promise<void>((resolve, reject) => {
          wake = resolve;
          setTimeout(() => reject(new Error('no wake-up within 5 s')), 5000).unref();
        });
        await action();
        await woken;
        // Other cases may have left due deliveries of their own instances behind: only this one's count.
        return (await store.claims.claimDue(at, 100, LEASE, unlimited)).filter((x) => x.instance_id === ins);
      };
      const [c] = await wokenBy(() => store.events.ingest(ins, [draft(ins)], route, T0), T0);
      assert.ok(c, 'the ingested delivery is claimable when the listener wakes');
      await store.outcomes.recordAttempts(
        [result(c, 500, { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false }, T0)],
        T0,
      );
      const [again] = await wokenBy(() => store.log.redeliver(ins, c.delivery_id, T0 + 1), T0 + 1);
      assert.equal(again?.delivery_id, c.delivery_id);
    });

    test('the next due time is the earliest retry after the given time, whichever webhook it is for', async () => {
      // Later than anything other cases store, so only these retries are due after it.
      const far = T0 + 1e10;
      const ins = await instance();
      const [a, b] = [await webhook(ins), await webhook(ins)];
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const claims = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (c) => c.instance_id === ins,
      );
      const at = (c: ClaimedDelivery) => (c.webhook_id === a.webhook_id ? far + 5000 : far + 3000);
      assert.deepEqual(claims.map((c) => c.webhook_id).sort(), [a.webhook_id, b.webhook_id].sort());
      await store.outcomes.recordAttempts(
        claims.map((c) => result(c, 500, { kind: 'retry', at: at(c), reason: 'schedule' }, T0)),
        T0,
      );
      assert.deepEqual(
        [
          await store.claims.nextDueAt(far),
          await store.claims.nextDueAt(far + 3000),
          await store.claims.nextDueAt(far + 5000),
        ],
        [far + 3000, far + 5000, null],
      );
    });

    test('queue stats: pending counts queued and in-flight deliveries; due and the oldest due time leave out leased ones', async () => {
      // Earlier than anything other cases store, so this delivery is the oldest due one whatever they left behind.
      const early = T0 - 1e9;
      const ins = await instance();
      const w = await webhook(ins);
      const before = await store.claims.queueStats(T0);
      await store.events.ingest(ins, [draft(ins)], route, early);
      const queued = await store.claims.queueStats(T0);
      assert.deepEqual(
        [queued.pending, queued.due, queued.oldest_due_at],
        [before.pending + 1, before.due + 1, early],
      );
      const [claim] = (await store.claims.claimDue(early, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      const leased = await store.claims.queueStats(early + 1);
      assert.deepEqual([leased.pending, leased.due, leased.oldest_due_at], [before.pending + 1, 0, null]);
      await store.outcomes.recordAttempts([result(claim, 200, { kind: 'delivered' }, early + 1)], early + 1);
      assert.equal((await store.claims.queueStats(T0)).pending, before.pending);
    });

    test('a released claim is due at once for anyone, with no attempt counted; a stale lease releases nothing', async () => {
      const ins = await instance();
      await webhook(ins);
      await store.events.ingest(ins, [draft(ins)], route, T0);
      const [c] = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
        (x) => x.instance_id === ins,
      );
      assert.equal(await store.outcomes.releaseClaims([c], T0 + 100), 1);
      const d = await store.log.getDelivery(ins, c.delivery_id);
      assert.deepEqual([d?.status, d?.next_attempt_at, d?.attempts], ['pending', T0 + 100, 0]);
      const [again] = (await store.claims.claimDue(T0 + 100, 100, LEASE, unlimited)).filter(
        (x) => x.instance_id === ins,
      );
      assert.deepEqual(
        [again?.delivery_id, again?.attempt],
        [c.delivery_id, 1],
        'long before the lease ran out',
      );
      assert.equal(await store.outcomes.releaseClaims([c], T0 + 200), 0, "the first holder's lease is gone");
      assert.equal(await store.outcomes.releaseClaims([], T0 + 200), 0);
    });

    test('retention purges old finished deliveries with their attempts in batches, and the events left without any', async () => {
      const OLD = T0 - 100 * 86_400_000;
      const cutoff = OLD + 86_400_000;
      const ins = await instance();
      const w = await webhook(ins);
      const [delivered, failed, retrying, recent] = [draft(ins), draft(ins), draft(ins), draft(ins)];
      await store.events.ingest(ins, [delivered, failed, retrying, recent], route, OLD);
      const quiet = await instance(); // no webhook: its event has no delivery at all
      const lonely = draft(quiet);
      await store.events.ingest(quiet, [lonely], route, OLD);
      const claims = (await store.claims.claimDue(OLD, 100, LEASE, unlimited)).filter(
        (c) => c.webhook_id === w.webhook_id,
      );
      const claim = (e: EventDraft) => claims.find((c) => c.event_id === e.event_id) as ClaimedDelivery;
      await store.outcomes.recordAttempts(
        [
          result(claim(delivered), 200, { kind: 'delivered' }, OLD),
          result(
            claim(failed),
            500,
            { kind: 'failed', reason: 'attempts_exhausted', disableWebhook: false },
            OLD,
          ),
          result(claim(retrying), 500, { kind: 'retry', at: OLD + 5000, reason: 'schedule' }, OLD),
          result(claim(recent), 200, { kind: 'delivered' }, cutoff + 1000),
        ],
        OLD,
      );

      const first = await store.retention.purgeFinished(cutoff, 1);
      assert.equal(first.deliveries, 1, 'one delivery per batch of one');
      const total = { ...first };
      for (let batch = first; batch.deliveries + batch.events > 0; ) {
        batch = await store.retention.purgeFinished(cutoff, 1);
        total.deliveries += batch.deliveries;
        total.events += batch.events;
      }
      assert.deepEqual(total, { deliveries: 2, events: 3 });

      const left = (await store.log.listDeliveries(ins, { limit: 10 })).deliveries;
      assert.deepEqual(
        left.map((d) => [d.event_id, d.status]).sort(),
        [
          [retrying.event_id, 'pending'],
          [recent.event_id, 'delivered'],
        ].sort(),
        'pending deliveries stay whatever their age; the age of a finished one is its last attempt',
      );
      assert.equal(await store.log.getDelivery(ins, claim(delivered).delivery_id), null);
      // A purged event_id is forgotten: published again, it is a new event. A kept one is still a duplicate.
      const [republished] = await store.events.ingest(ins, [delivered], route, T0);
      assert.deepEqual([republished.duplicate, republished.deliveries], [false, 1]);
      assert.equal((await store.events.ingest(ins, [retrying], route, T0))[0].duplicate, true);
      assert.equal((await store.events.ingest(quiet, [lonely], route, T0))[0].duplicate, false);
    });
  });
}
