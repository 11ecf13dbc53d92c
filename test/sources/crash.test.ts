/**
 * A crash mid-way: 500 messages for the queue, the `npm start` child consuming them is SIGKILLed (every process
 * of it at once) part-way through, and started again on the same data. Every message ends up stored, as exactly as
 * many distinct events as were published (a message redelivered after the crash is the same event), and nothing is
 * left unacknowledged. Redis: the dead consumer's pending entries are taken over (XAUTOCLAIM), or they would never
 * be delivered again.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { allDeliveries, instanceWithWebhook } from '../support/child-rig.ts';
import { eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';
import { messageBody, numberOf } from './messages.ts';
import { KINDS, natsConsumerFirst, testQueue } from './rig.ts';

const N = 500;
/** Published before the start; the rest while the consumer is held still, just before the kill. */
const FIRST = 200;
// Small batches, so that the kill lands while many messages are taken and not yet acknowledged.
const ENV = { SOURCE_PREFETCH: '64', SOURCE_RECLAIM_S: '2' };

for (const kind of KINDS) {
  test(`${kind}: a consumer killed mid-way loses nothing and stores nothing twice`, async () => {
    const q = await testQueue(kind);
    const receiver = await TestReceiver.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-src-crash-'));
    const run = randomBytes(4).toString('hex');
    let herald: ChildHerald | null = null;
    try {
      // What the killed process took and never acked comes back after the consumer's ack_wait: short here, as
      // SOURCE_RECLAIM_S is for Redis.
      if (kind === 'nats') await natsConsumerFirst(q, 3000);
      for (let n = 0; n < FIRST; n++) await q.publish(messageBody('herald', n, run), `${run}-${n}`);
      herald = await spawnHerald(dataDir, ENV);
      const { instanceId } = await instanceWithWebhook(herald, receiver.url, ['*']);
      const made = await herald.request('POST', '/sources', {
        url: q.url(),
        format: 'herald',
        instance_id: instanceId,
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const sourceId = made.body.source.source_id;
      const first = herald;
      await eventually(
        async () => ((await allDeliveries(first, instanceId)).length >= 100 ? true : undefined),
        30_000,
        'a first part stored',
      );
      // Held still on purpose (SIGSTOP) while the rest is published, so that the kill finds messages waiting and
      // taken, however fast it consumed the first part.
      for (const pid of herald.processes()) process.kill(pid, 'SIGSTOP');
      for (let n = FIRST; n < N; n++) await q.publish(messageBody('herald', n, run), `${run}-${n}`);
      await herald.kill('SIGKILL', 'all');
      const atKill = (await q.waiting()) + ((await q.unacked()) ?? 0);
      assert.ok(atKill > 0, 'killed with messages still to consume');
      herald = await spawnHerald(dataDir, ENV);
      const second = herald;
      const deliveries = await eventually(
        async () => {
          const all = await allDeliveries(second, instanceId);
          return all.length >= N ? all : undefined;
        },
        60_000,
        `${N} events stored`,
      );
      assert.equal(
        new Set(deliveries.map((d) => d.event_id)).size,
        N,
        'as many distinct events as published',
      );
      assert.equal(deliveries.length, N);
      await eventually(
        async () => (new Set(receiver.received.map((r) => numberOf(r.body))).size === N ? true : undefined),
        30_000,
        'all delivered',
      );
      // Nothing unacknowledged: the broker's count, or, once nothing consumes, nothing back in the queue.
      const unacked = await q.unacked();
      if (unacked !== null)
        await eventually(async () => ((await q.unacked()) === 0 ? true : undefined), 30_000, 'no unacked');
      assert.equal((await second.request('DELETE', `/sources/${sourceId}`)).status, 200);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(await q.waiting(), 0, 'nothing waiting in the queue');
      if (unacked !== null) assert.equal(await q.unacked(), 0);
    } finally {
      await herald?.kill('SIGTERM').catch(() => {});
      await receiver.close();
      await q.remove();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
