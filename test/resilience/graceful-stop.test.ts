/**
 * SPEC §11 graceful stop, as a real process: SIGTERM stops claiming, lets the attempts in flight finish (up to the
 * delivery timeout) and records them, releases what it cannot wait for, and exits 0. Nothing is lost or stuck after
 * a restart on the same DATA_DIR.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { Dispatcher } from '../../src/delivery/dispatcher.ts';
import { eventBody } from '../../src/domain/event-body.ts';
import { route } from '../../src/domain/routing.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import { allDeliveries, instanceWithWebhook } from '../support/child-rig.ts';
import { eventually, messagePayload } from '../support/herald.ts';
import { LaneSender } from '../support/lane-sender.ts';
import { webhookRecord } from '../support/records.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

/** A receiver that holds every request until told to answer (or forever), and remembers each event id. */
async function heldReceiver() {
  const held: ServerResponse[] = [];
  const arrivals: { eventId: string; at: number }[] = [];
  let answerAtOnce = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      arrivals.push({ eventId: JSON.parse(Buffer.concat(chunks).toString()).event_id, at: Date.now() });
      if (answerAtOnce) res.end('ok');
      else held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    /** Answers 200 to everything held, and to everything from now on. */
    release() {
      answerAtOnce = true;
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function publish(herald: ChildHerald, instanceId: string, count: number): Promise<string[]> {
  const events = Array.from({ length: count }, () => ({ event: 'message', payload: messagePayload() }));
  const res = await herald.request('POST', `/instances/${instanceId}/events/batch`, { events });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.results.map((r: { event_id: string }) => r.event_id);
}

test('SIGTERM: the attempts in flight finish and are recorded, nothing more is claimed, exit 0, a restart delivers the rest once', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-stop-'));
  const receiver = await heldReceiver();
  const env = { DELIVERY_TIMEOUT_MS: '10000' };
  let herald = await spawnHerald(dataDir, env);
  try {
    const { instanceId } = await instanceWithWebhook(herald, receiver.url);
    const eventIds = await publish(herald, instanceId, 100);
    // A webhook has at most 64 attempts in flight: the receiver holds all 64, the other 36 wait in the queue.
    await eventually(
      async () => (receiver.arrivals.length === 64 ? true : undefined),
      10_000,
      '64 in flight',
    );

    const signalled = Date.now();
    herald.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(herald.child.exitCode, null, 'still running while its attempts are in flight');
    receiver.release(); // each answer frees a slot: a dispatcher still claiming would send more now
    const exit = await herald.exited;
    t.diagnostic(`stopped ${Date.now() - signalled} ms after SIGTERM`);
    assert.deepEqual(exit, { code: 0, signal: null }, herald.output());
    assert.equal(receiver.arrivals.length, 64, 'nothing was claimed after SIGTERM');

    const first = new Set(receiver.arrivals.map((a) => a.eventId));
    herald = await spawnHerald(dataDir, env);
    // At once, long before any lease could run out: the 64 were recorded as delivered, the rest never started.
    const early = await allDeliveries(herald, instanceId);
    assert.equal(early.length, 100);
    for (const d of early.filter((x) => first.has(x.event_id))) {
      assert.deepEqual([d.status, d.attempt_count], ['delivered', 1], d.event_id);
    }
    await eventually(
      async () => (receiver.arrivals.length >= 100 ? true : undefined),
      15_000,
      'the other 36 events after the restart',
    );
    await eventually(
      async () =>
        (await allDeliveries(herald, instanceId, '&status=pending')).length === 0 ? true : undefined,
      10_000,
      'no delivery pending',
    );
    assert.deepEqual(receiver.arrivals.map((a) => a.eventId).sort(), [...eventIds].sort(), 'each event once');
  } finally {
    await herald.kill('SIGKILL');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGTERM while attempts hang: they end at the delivery timeout, are logged as timeouts and retried after a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-stop-'));
  const receiver = await heldReceiver(); // holds everything: the receiver hangs
  const TIMEOUT = 2000;
  const env = { DELIVERY_TIMEOUT_MS: String(TIMEOUT), RETRY_SCHEDULE: '0.2,0.2' };
  let herald = await spawnHerald(dataDir, env);
  try {
    const { instanceId } = await instanceWithWebhook(herald, receiver.url);
    const eventIds = await publish(herald, instanceId, 5);
    await eventually(async () => (receiver.arrivals.length === 5 ? true : undefined), 10_000, '5 hanging');

    const signalled = Date.now();
    const exit = await herald.kill('SIGTERM');
    const took = Date.now() - signalled;
    t.diagnostic(`stopped ${took} ms after SIGTERM with 5 attempts hanging (timeout ${TIMEOUT} ms)`);
    assert.deepEqual(exit, { code: 0, signal: null }, herald.output());
    // Bounded by the timeout (plus the stop's margin and a loaded machine's slack), not by the receiver.
    assert.ok(took < TIMEOUT + 1000 + 3000, `took ${took} ms`);
    assert.equal(receiver.arrivals.length, 5);

    receiver.release();
    herald = await spawnHerald(dataDir, env);
    await eventually(
      async () => {
        const all = await allDeliveries(herald, instanceId);
        return all.length === 5 && all.every((d) => d.status === 'delivered') ? all : undefined;
      },
      15_000,
      'every delivery delivered after the restart',
    );
    for (const id of eventIds) {
      const [d] = await allDeliveries(herald, instanceId, `&status=delivered`).then((all) =>
        all.filter((x) => x.event_id === id),
      );
      const detail = await herald.request('GET', `/instances/${instanceId}/deliveries/${d.delivery_id}`);
      const log = detail.body.delivery.attempts.map((a: any) => [a.attempt, a.error ?? a.status_code]);
      assert.deepEqual(log, [
        [1, 'timeout'],
        [2, 200],
      ]);
    }
  } finally {
    await herald.kill('SIGKILL');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a second signal during the stop exits at once with 1; the interrupted delivery is kept for the next start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-stop-'));
  const receiver = await heldReceiver();
  const env = { DELIVERY_TIMEOUT_MS: '20000' };
  let herald = await spawnHerald(dataDir, env);
  try {
    const { instanceId } = await instanceWithWebhook(herald, receiver.url);
    const [eventId] = await publish(herald, instanceId, 1);
    await eventually(async () => (receiver.arrivals.length === 1 ? true : undefined), 10_000, 'the attempt');
    herald.child.kill('SIGTERM');
    await eventually(
      async () => (/SIGTERM received/.test(herald.output()) ? true : undefined),
      5000,
      'stopping',
    );
    const signalled = Date.now();
    const exit = await herald.kill('SIGINT');
    assert.deepEqual(exit, { code: 1, signal: null }, herald.output());
    assert.ok(Date.now() - signalled < 5000, 'without waiting for the 20 s timeout');

    herald = await spawnHerald(dataDir, env);
    const [d] = await allDeliveries(herald, instanceId);
    assert.deepEqual(
      [d.event_id, d.status, d.attempt_count],
      [eventId, 'pending', 0],
      'made again when its lease runs out',
    );
  } finally {
    await herald.kill('SIGKILL');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('an attempt that outlives the grace period is released: due at once for the next process, its late result ignored', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-stop-'));
  const store = openSqliteStore(join(dataDir, 'herald.db'));
  try {
    const now = Date.now();
    await store.catalog.createInstance({
      instance_id: 'ins_stop0000000000000001',
      name: 's',
      status: 'STOPPED',
      phone: null,
      created_at: now,
    });
    await store.webhooks.createWebhook(
      webhookRecord({ webhook_id: 'whk_stop0000000000000001', instance_id: 'ins_stop0000000000000001' }, now),
    );
    const e = {
      event_id: 'evt_stop0000000000000001',
      event: 'presence.update',
      instance_id: 'ins_stop0000000000000001',
      timestamp: now,
      payload: {},
    };
    await store.events.ingest(e.instance_id, [{ ...e, body: eventBody(e) }], route, now);

    // A send that ignores every timeout, as a bug in a lower layer would.
    let finishLate: (o: AttemptOutcome) => void = () => {};
    let sent = 0;
    const sender = new LaneSender(() => {
      sent++;
      return new Promise((resolve) => {
        finishLate = resolve;
      });
    });
    after(() => sender.close());
    const dispatcher = new Dispatcher({
      store,
      sender,
      rules: { schedule: [5], maxRetryAfterS: 60 },
      clock: Date.now,
      logger: pino({ level: 'silent' }),
      leaseMs: 60_000,
    });
    dispatcher.start();
    await eventually(async () => (sent === 1 ? true : undefined), 5000, 'the attempt to start');
    const stopping = Date.now();
    await dispatcher.stop(300);
    assert.ok(Date.now() - stopping < 3000, 'the stop did not wait for the hanging attempt');

    // Another process claims it at once, not after the 60 s lease; the attempt is not counted.
    const [again] = await store.claims.claimDue(Date.now(), 10, 60_000, () => 10);
    assert.deepEqual([again?.delivery_id !== undefined, again?.attempt], [true, 1]);
    finishLate({
      started_at: now,
      duration_ms: 1,
      status_code: 200,
      error: null,
      response_body: null,
      retry_after: null,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const d = await store.log.getDelivery(e.instance_id, again.delivery_id);
    assert.deepEqual([d?.status, d?.attempts_log.length], ['pending', 0], 'the late result was dropped');
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
