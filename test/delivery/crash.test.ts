/**
 * SPEC §7, §8 at least once: Herald as a real process, killed mid-flight (SIGKILL) or stopped (SIGTERM), then
 * restarted on the same DATA_DIR. Every acknowledged event reaches the receiver; nothing stays leased.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { eventually, messagePayload } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

/** The lease is DELIVERY_TIMEOUT_MS + 5 s, so an attempt lost in a crash is made again ~6 s later. */
const ENV = { DELIVERY_TIMEOUT_MS: '1000' };
const RECEIVER_DELAY_MS = 300;

interface Rig {
  dataDir: string;
  receiver: TestReceiver;
  herald: ChildHerald;
  instanceId: string;
  /** Starts Herald again on the same data. */
  restart(): Promise<ChildHerald>;
  close(): Promise<void>;
}

/** A child Herald with one enabled webhook to a receiver that answers 200 after a delay. */
async function rig(): Promise<Rig> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-crash-'));
  const receiver = await TestReceiver.start();
  receiver.answer = () => ({ status: 200, delayMs: RECEIVER_DELAY_MS });
  const r: Rig = {
    dataDir,
    receiver,
    herald: await spawnHerald(dataDir, ENV),
    instanceId: '',
    async restart() {
      r.herald = await spawnHerald(dataDir, ENV);
      return r.herald;
    },
    async close() {
      await r.herald.kill('SIGKILL');
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    const ins = await r.herald.request('POST', '/instances', { name: 'crash' });
    assert.equal(ins.status, 201);
    r.instanceId = ins.body.instance_id;
    const base = `/instances/${r.instanceId}/webhooks`;
    const w = await r.herald.request('POST', base, { destination_url: receiver.url, events: ['message'] });
    assert.equal(w.status, 201);
    const on = await r.herald.request('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true });
    assert.equal(on.status, 200);
  } catch (err) {
    await r.close();
    throw err;
  }
  return r;
}

/**
 * Publishes `count` events, `parallel` at a time, and collects the ids acknowledged with a 202; stops quietly at
 * the first refused connection (the process was killed).
 */
async function publishMany(r: Rig, count: number, acked: Set<string>, parallel = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const event_id = `evt_${randomUUID().replaceAll('-', '')}`;
      try {
        const res = await r.herald.request('POST', `/instances/${r.instanceId}/events`, {
          event: 'message',
          event_id,
          payload: messagePayload(),
        });
        if (res.status === 202) acked.add(event_id);
      } catch {
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

const arrivedIds = (receiver: TestReceiver) =>
  new Set(receiver.received.map((q) => q.body?.event_id as string));

/** All of the instance's deliveries (at most 1000), as the list view shows them. */
async function deliveries(r: Rig): Promise<any[]> {
  const all: any[] = [];
  let cursor = '';
  for (let page = 0; page < 5; page++) {
    const res = await r.herald.request('GET', `/instances/${r.instanceId}/deliveries?limit=200${cursor}`);
    assert.equal(res.status, 200);
    all.push(...res.body.deliveries);
    if (!res.body.next_cursor) break;
    cursor = `&cursor=${res.body.next_cursor}`;
  }
  return all;
}

test('SIGKILL mid-flight: after a restart every acknowledged event arrives at least once', async (t) => {
  const r = await rig();
  try {
    const acked = new Set<string>();
    const publishing = publishMany(r, 200, acked);
    // Killed while deliveries are in flight, some still to be made, and, likely, publishing goes on. The receiver
    // holds each twice as long as the rig's, so that deliveries fall behind publishing on either store, and the kill
    // waits until they are well behind: requests already on their way still arrive while it is made (one behind was
    // not always enough on PostgreSQL under CI's load; twenty behind at 300 ms was not reached within 20 s once).
    r.receiver.answer = () => ({ status: 200, delayMs: 2 * RECEIVER_DELAY_MS });
    const behind = () => acked.size - arrivedIds(r.receiver).size >= 10;
    await eventually(
      async () => (acked.size >= 100 && r.receiver.received.length > 0 && behind() ? true : undefined),
      20_000,
      'deliveries in flight',
    );
    // Every process of the start at the same instant (npm, the launcher and Herald), as a crash would.
    const killed = await r.herald.kill('SIGKILL', 'all');
    assert.equal(killed.signal, 'SIGKILL');
    await publishing;
    const beforeKill = arrivedIds(r.receiver).size;
    t.diagnostic(`acknowledged ${acked.size} of 200; ${beforeKill} had arrived when the process was killed`);
    assert.ok(acked.size > beforeKill, 'deliveries were still to be made at the kill');

    await r.restart();
    await eventually(
      async () => ([...acked].every((id) => arrivedIds(r.receiver).has(id)) ? true : undefined),
      30_000,
      'every acknowledged event at the receiver',
    );
    await eventually(
      async () => ((await deliveries(r)).every((d) => d.status === 'delivered') ? true : undefined),
      10_000,
      'every delivery delivered',
    );
    const duplicates = r.receiver.received.length - arrivedIds(r.receiver).size;
    t.diagnostic(
      `${r.receiver.received.length} requests for ${arrivedIds(r.receiver).size} events: ${duplicates} duplicates`,
    );
  } finally {
    await r.close();
  }
});

test('SIGTERM: exits 0 after recording the attempts in flight; a restart delivers the rest', async (t) => {
  const r = await rig();
  try {
    // Held twice as long (within the delivery timeout), the receiver takes fewer than 100 in the time it takes to
    // publish them, on either store: some are still to be made at the stop.
    r.receiver.answer = () => ({ status: 200, delayMs: 600 });
    const acked = new Set<string>();
    await publishMany(r, 100, acked);
    assert.equal(acked.size, 100);
    await r.receiver.waitFor(10);
    const stopped = await r.herald.kill('SIGTERM');
    assert.deepEqual(stopped, { code: 0, signal: null }, r.herald.output());
    const beforeStop = arrivedIds(r.receiver);
    t.diagnostic(`${beforeStop.size} of 100 had arrived when the process stopped`);
    assert.ok(beforeStop.size < 100, 'deliveries were left for the restart');

    await r.restart();
    // Well within the 6 s lease: an attempt that was in flight and not recorded would still be pending here.
    const early = await deliveries(r);
    for (const d of early.filter((x) => beforeStop.has(x.event_id))) {
      assert.equal(d.status, 'delivered', `${d.event_id} arrived before the stop but is ${d.status}`);
      assert.equal(d.attempt_count, 1);
    }
    await eventually(
      async () => ((await deliveries(r)).every((d) => d.status === 'delivered') ? true : undefined),
      10_000,
      'every delivery delivered',
    );
    assert.deepEqual(arrivedIds(r.receiver), acked);
    assert.equal(r.receiver.received.length, 100, 'no attempt was made twice');
  } finally {
    await r.close();
  }
});
