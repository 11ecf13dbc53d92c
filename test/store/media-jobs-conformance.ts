/**
 * Engine media jobs and engine HMAC keys, on every adapter: an event whose media is still to be downloaded holds its
 * deliveries until its job is settled; a job is leased like a delivery; key rotation re-seals HMAC keys too.
 * Time is passed explicitly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import type { EventDraft } from '../../src/domain/types.ts';
import type { Store } from '../../src/store/ports.ts';
import { webhookRecord } from '../support/records.ts';

/** Later than anything the main suite stores, so its due work never mixes with this suite's. */
const T0 = Date.UTC(2027, 0, 1);
const LEASE = 10_000;
const unlimited = () => 1000;
let seq = 0;
const uid = (prefix: string) => `${prefix}_media${(++seq).toString().padStart(22, '0')}`;
const URL_ = 'http://waha:3000/api/files/default/true_x.jpeg';

export function mediaJobsConformance(name: string, open: () => Promise<Store>): void {
  describe(`media jobs and engine keys: ${name}`, () => {
    let store: Store;
    before(async () => {
      store = await open();
    });
    after(() => store.close());

    async function instanceWithWebhook(webhooks = 1): Promise<{ ins: string; hooks: string[] }> {
      const ins = uid('ins');
      await store.catalog.createInstance({
        instance_id: ins,
        name: 'media',
        status: 'STOPPED',
        phone: null,
        created_at: T0,
      });
      const hooks = [];
      for (let i = 0; i < webhooks; i++) {
        const w = webhookRecord({ webhook_id: uid('whk'), instance_id: ins }, T0);
        await store.webhooks.createWebhook(w);
        hooks.push(w.webhook_id);
      }
      return { ins, hooks };
    }

    function withMedia(ins: string): EventDraft {
      const payload = {
        id: 'm1',
        fromMe: false,
        hasMedia: true,
        media: { url: URL_, mimetype: 'image/jpeg' },
      };
      const e = { event_id: uid('evt'), event: 'message', instance_id: ins, timestamp: T0, payload };
      return { ...e, body: eventBody(e), download: { url: URL_, mimetype: 'image/jpeg', filename: null } };
    }

    const claimedOf = async (ins: string, at: number) =>
      (await store.claims.claimDue(at, 500, LEASE, unlimited)).filter((c) => c.instance_id === ins);
    const jobsOf = async (eventId: string, at: number) =>
      (await store.mediaJobs.claimMediaJobs(at, 100, LEASE)).filter((j) => j.event_id === eventId);

    test('a job remembers whether its event came through an engine endpoint, and brings its instance’s prefix', async () => {
      const { ins } = await instanceWithWebhook();
      const prefix = 'http://waha:3000/api/files/default/';
      await store.catalog.updateInstance(ins, { engine_media_prefix: prefix });
      const viaEngine = withMedia(ins);
      viaEngine.download = { url: URL_, mimetype: 'image/jpeg', filename: null, via_engine: true };
      const viaEvents = withMedia(ins);
      await store.events.ingest(ins, [viaEngine, viaEvents], route, T0);
      const claimed = (await store.mediaJobs.claimMediaJobs(T0, 100, LEASE)).filter(
        (j) => j.instance_id === ins,
      );
      const byEvent = new Map(claimed.map((j) => [j.event_id, j]));
      assert.equal(byEvent.get(viaEngine.event_id)?.via_engine, true);
      assert.equal(byEvent.get(viaEvents.event_id)?.via_engine, false);
      assert.deepEqual(
        claimed.map((j) => j.engine_media_prefix),
        [prefix, prefix],
      );
      // Cleared, the claim says so too.
      assert.equal(
        (await store.catalog.updateInstance(ins, { engine_media_prefix: null }))?.engine_media_prefix,
        null,
      );
      for (const j of claimed) await store.mediaJobs.retryMediaJob(j, T0);
      const again = (await store.mediaJobs.claimMediaJobs(T0, 100, LEASE)).filter(
        (j) => j.instance_id === ins,
      );
      assert.deepEqual(
        again.map((j) => j.engine_media_prefix),
        [null, null],
      );
      for (const j of again) await store.mediaJobs.settleMediaJob(j, { status: 'failed' }, T0 + 1);
    });

    test('deliveries wait for their media; the settled object reaches the body, and they are due at once', async () => {
      const { ins, hooks } = await instanceWithWebhook(2);
      const e = {
        ...withMedia(ins),
        trace_context: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      };
      const [answer] = await store.events.ingest(ins, [e], route, T0);
      assert.equal(answer.deliveries, 2);
      assert.deepEqual(
        await claimedOf(ins, T0 + 60_000),
        [],
        'nothing is claimed while the media is pending',
      );
      const list = (await store.log.listDeliveries(ins, { limit: 10 })).deliveries;
      assert.deepEqual(
        list.map((d) => [d.status, d.next_attempt_at]),
        [
          ['pending', null],
          ['pending', null],
        ],
      );

      const [job] = await jobsOf(e.event_id, T0);
      assert.deepEqual(
        { ...job, lease_token: typeof job.lease_token },
        {
          event_id: e.event_id,
          instance_id: ins,
          url: URL_,
          mimetype: 'image/jpeg',
          filename: null,
          engine_error: null,
          via_engine: false,
          engine_media_prefix: null,
          tries: 0,
          lease_token: 'string',
          trace_context: e.trace_context,
        },
      );
      assert.deepEqual(await jobsOf(e.event_id, T0 + LEASE - 1), [], 'leased');
      const media = {
        status: 'ready',
        mimetype: 'image/jpeg',
        media_id: 'med_x',
        url: 'https://h/media/med_x',
      };
      assert.equal(await store.mediaJobs.settleMediaJob(job, media, T0 + 5), true);
      assert.equal(await store.mediaJobs.settleMediaJob(job, media, T0 + 6), false, 'settled once');

      const claims = await claimedOf(ins, T0 + 5);
      assert.deepEqual(claims.map((c) => c.webhook_id).sort(), [...hooks].sort());
      for (const c of claims) {
        assert.deepEqual(JSON.parse(c.body).payload.media, media);
        assert.deepEqual(Object.keys(JSON.parse(c.body)), [
          'event_id',
          'event',
          'instance_id',
          'timestamp',
          'payload',
        ]);
      }
      assert.deepEqual(await jobsOf(e.event_id, T0 + 10 * LEASE), [], 'the job is gone');
    });

    test('a lease that ran out goes to the next claim; the old holder can no longer settle or retry', async () => {
      const { ins } = await instanceWithWebhook();
      const e = withMedia(ins);
      await store.events.ingest(ins, [e], route, T0);
      const [first] = await jobsOf(e.event_id, T0);
      const [second] = await jobsOf(e.event_id, T0 + LEASE + 1);
      assert.ok(second, 'claimed again once the lease ran out');
      assert.equal(await store.mediaJobs.settleMediaJob(first, { status: 'failed' }, T0 + LEASE + 2), false);
      await store.mediaJobs.retryMediaJob(first, T0);
      assert.deepEqual(await jobsOf(e.event_id, T0 + LEASE + 2), [], 'the stale retry changed nothing');
      assert.equal(await store.mediaJobs.settleMediaJob(second, { status: 'failed' }, T0 + LEASE + 3), true);
    });

    test('a retry counts a try and is due at the time given', async () => {
      const { ins } = await instanceWithWebhook();
      const e = withMedia(ins);
      await store.events.ingest(ins, [e], route, T0);
      const [job] = await jobsOf(e.event_id, T0);
      await store.mediaJobs.retryMediaJob(job, T0 + 5000);
      assert.deepEqual(await jobsOf(e.event_id, T0 + 4999), []);
      const [again] = await jobsOf(e.event_id, T0 + 5000);
      assert.equal(again.tries, 1);
    });

    test('no job without a delivery; the same event again makes no second job', async () => {
      const { ins } = await instanceWithWebhook(0);
      const e = withMedia(ins);
      assert.equal((await store.events.ingest(ins, [e], route, T0))[0].deliveries, 0);
      assert.deepEqual(await jobsOf(e.event_id, T0), []);
      const other = await instanceWithWebhook();
      const twice = withMedia(other.ins);
      await store.events.ingest(other.ins, [twice], route, T0);
      await store.events.ingest(other.ins, [twice], route, T0);
      assert.equal((await jobsOf(twice.event_id, T0)).length, 1);
    });

    test('a redelivery of an event still waiting for its media waits with it', async () => {
      const { ins, hooks } = await instanceWithWebhook();
      const e = withMedia(ins);
      await store.events.ingest(ins, [e], route, T0);
      await store.webhooks.setWebhookEnabled(ins, hooks[0], false, T0 + 1);
      await store.webhooks.setWebhookEnabled(ins, hooks[0], true, T0 + 2);
      const [failed] = (await store.log.listDeliveries(ins, { limit: 1 })).deliveries;
      assert.equal(failed.failure_reason, 'webhook_disabled');
      const redone = await store.log.redeliver(ins, failed.delivery_id, T0 + 3);
      assert.equal(redone?.ok && redone.delivery.next_attempt_at, null);
      assert.deepEqual(await claimedOf(ins, T0 + 60_000), []);
      const [job] = await jobsOf(e.event_id, T0 + 3);
      await store.mediaJobs.settleMediaJob(job, { status: 'unavailable' }, T0 + 4);
      assert.equal((await claimedOf(ins, T0 + 4)).length, 1);
    });

    test('the engine’s own error travels with its job; why a job failed is the delivery detail’s media_failure', async () => {
      const { ins } = await instanceWithWebhook();
      const failed = withMedia(ins);
      failed.download = { url: '', mimetype: 'image/jpeg', filename: null, engine_error: 'gone' };
      const stored = withMedia(ins);
      const plain = { ...withMedia(ins), download: null };
      await store.events.ingest(ins, [failed, stored, plain], route, T0);
      const claimed = await store.mediaJobs.claimMediaJobs(T0, 100, LEASE);
      const job = claimed.find((j) => j.event_id === failed.event_id);
      const other = claimed.find((j) => j.event_id === stored.event_id);
      assert.ok(job && other);
      assert.deepEqual([job.url, job.engine_error, other.engine_error], ['', 'gone', null]);
      const why = 'the engine could not download it: gone';
      assert.equal(await store.mediaJobs.settleMediaJob(job, { status: 'failed' }, T0 + 1, why), true);
      await store.mediaJobs.settleMediaJob(other, { status: 'ready' }, T0 + 1);
      const detailOf = async (eventId: string) => {
        const [d] = (await store.log.listDeliveries(ins, { event_id: eventId, limit: 1 })).deliveries;
        return store.log.getDelivery(ins, d.delivery_id);
      };
      assert.equal((await detailOf(failed.event_id))?.media_failure, why);
      assert.equal((await detailOf(stored.event_id))?.media_failure, null);
      assert.equal((await detailOf(plain.event_id))?.media_failure, null);
    });

    test('an instance keeps its engine HMAC key sealed; key rotation re-seals it with the signing secrets', async () => {
      const { ins } = await instanceWithWebhook(0);
      const set = await store.catalog.updateInstance(ins, {
        name: 'renamed',
        engine_hmac_sealed: 'sealed-k',
      });
      assert.deepEqual([set?.name, set?.engine_hmac_sealed], ['renamed', 'sealed-k']);
      const kept = await store.catalog.updateInstance(ins, {});
      assert.deepEqual([kept?.name, kept?.engine_hmac_sealed], ['renamed', 'sealed-k']);
      const seen: string[] = [];
      await store.catalog.resealSecrets(
        (s) => {
          seen.push(s);
          return `new:${s}`;
        },
        { name: 'reseal_media_check', value: 'x' },
      );
      assert.ok(seen.includes('sealed-k'));
      assert.equal((await store.catalog.getInstance(ins))?.engine_hmac_sealed, 'new:sealed-k');
      const cleared = await store.catalog.updateInstance(ins, { engine_hmac_sealed: null });
      assert.equal(cleared?.engine_hmac_sealed, null);
      assert.equal(await store.catalog.updateInstance(uid('ins'), { name: 'x' }), null);
    });
  });
}
