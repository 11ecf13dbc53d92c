/**
 * Scale-out on PostgreSQL with real processes: 2 `serve --role api` and 3 `serve --role worker` over one schema,
 * real receivers on 127.0.0.1. Idempotent ingest across API processes, the per-webhook cap across workers, and
 * 5,000 events across 20 webhooks with one worker SIGKILLed half-way: every event delivered, no delivery
 * attempted by two workers at once, duplicates (at least once) reported.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { HOLD_MS } from '../../src/delivery/dispatcher.ts';
import { eventually, messagePayload } from '../support/herald.ts';
import { dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';
import { Recorder } from './recorder.ts';

/**
 * The lease is DELIVERY_TIMEOUT_MS + 5 s: a killed worker's deliveries are taken over ~10 s later. The timeout is
 * 5 s, not less: the receivers live in this test's process, which answers up to 3 × 64 attempts per webhook at
 * once; under the full suite's load an answer took 2 s (a timeout, retried 1 s later, seen as an early repeat).
 */
const DELIVERY_TIMEOUT_MS = '5000';
const LEASE_MS = 5000 + 5000;
const CAP = 64;

describe('scale-out: 2 api and 3 worker processes on one PostgreSQL', { skip: postgresSkip }, () => {
  let dataDir = '';
  let schema = '';
  let apis: ChildHerald[] = [];
  let workers: ChildHerald[] = [];
  const recorders: Recorder[] = [];

  before(async () => {
    const scratch = await scratchSchema();
    schema = scratch.schema;
    dataDir = mkdtempSync(join(tmpdir(), 'herald-scale-'));
    const env = {
      DATABASE_URL: scratch.url,
      SECRET_KEY: 'a'.repeat(64),
      DELIVERY_TIMEOUT_MS,
      RETRY_SCHEDULE: '1,1,1,1,1',
    };
    const start = (role: string) => spawnHerald(dataDir, env, 60_000, ['--role', role]);
    // All five at once: their migrations race, as they would in a deployment.
    const started = await Promise.all([
      start('api'),
      start('api'),
      start('worker'),
      start('worker'),
      start('worker'),
    ]);
    apis = started.slice(0, 2);
    workers = started.slice(2);
  });

  after(async () => {
    await Promise.all([...apis, ...workers].map((p) => p.kill('SIGKILL')));
    await Promise.all(recorders.map((r) => r.close()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
  });

  /** An instance with one enabled `message` webhook pointing at a new recorder. */
  async function webhook(
    holdMs: number,
    config: Record<string, unknown> = {},
  ): Promise<{ instanceId: string; recorder: Recorder }> {
    const recorder = await Recorder.start(holdMs);
    recorders.push(recorder);
    const api = apis[recorders.length % 2];
    const ins = await api.request('POST', '/instances', { name: 'scale' });
    assert.equal(ins.status, 201, JSON.stringify(ins.body));
    const base = `/instances/${ins.body.instance_id}/webhooks`;
    const w = await api.request('POST', base, {
      destination_url: recorder.url,
      events: ['message'],
      ...config,
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    const on = await api.request('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    return { instanceId: ins.body.instance_id, recorder };
  }

  const message = (event_id: string) => ({ event: 'message', event_id, payload: messagePayload() });
  let seq = 0;
  const eventId = (tag: string) => `evt_${tag}${String(++seq).padStart(24, '0')}`;

  /** Every delivery of the instance, as the delivery log lists them. */
  async function deliveries(instanceId: string): Promise<any[]> {
    const all: any[] = [];
    let cursor = '';
    for (;;) {
      const res = await apis[0].request('GET', `/instances/${instanceId}/deliveries?limit=200${cursor}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      all.push(...res.body.deliveries);
      if (!res.body.next_cursor) return all;
      cursor = `&cursor=${res.body.next_cursor}`;
    }
  }

  test('the same event_id published to both API processes at once is queued once', async () => {
    const { instanceId, recorder } = await webhook(0);
    const ids = Array.from({ length: 50 }, () => eventId('twice'));
    for (const id of ids) {
      const both = await Promise.all(
        apis.map((api) => api.request('POST', `/instances/${instanceId}/events`, message(id))),
      );
      assert.deepEqual(
        both.map((r) => [r.status, r.body.event_id, r.body.deliveries]),
        [
          [202, id, 1],
          [202, id, 1],
        ],
      );
    }
    const listed = await deliveries(instanceId);
    assert.equal(listed.length, 50, 'one delivery per event');
    await eventually(async () => (recorder.eventIds().size === 50 ? true : undefined), 30_000, '50 arrivals');
    assert.equal(recorder.visits.length, 50, 'each event sent once');
  });

  test('the per-webhook in-flight cap holds across the three workers', async () => {
    const slow = await webhook(1000);
    const fast = await webhook(0);
    const publish = (instanceId: string, count: number, tag: string) =>
      apis[0].request('POST', `/instances/${instanceId}/events/batch`, {
        events: Array.from({ length: count }, () => message(eventId(tag))),
      });
    assert.equal((await publish(slow.instanceId, 150, 'slow')).status, 202);
    await eventually(
      async () => (slow.recorder.inFlight >= CAP ? true : undefined),
      30_000,
      'the slow receiver holding a full cap',
    );
    const publishedAt = performance.now();
    assert.equal((await publish(fast.instanceId, 30, 'fast')).status, 202);
    await eventually(async () => (fast.recorder.eventIds().size === 30 ? true : undefined), 30_000, 'fast');
    const fastMs = performance.now() - publishedAt;
    assert.ok(
      slow.recorder.visits.length < 150,
      'the slow webhook still had a backlog while the fast one was served',
    );
    await eventually(
      async () => (slow.recorder.eventIds().size === 150 ? true : undefined),
      60_000,
      'the slow backlog',
    );
    assert.ok(
      slow.recorder.maxInFlight <= CAP,
      `at most ${CAP} at once to the slow receiver, saw ${slow.recorder.maxInFlight}`,
    );
    assert.equal(slow.recorder.maxInFlight, CAP, 'the cap was reached, so the bound was tested');
    assert.ok(fastMs < 10_000, `the fast webhook waited ${Math.round(fastMs)} ms`);
  });

  test('a rate limit of 10 per second holds across the three workers, each delivery in one attempt', async () => {
    const { instanceId, recorder } = await webhook(0, { rate_limit: { per_second: 10 } });
    const events = Array.from({ length: 40 }, () => message(eventId('paced')));
    const res = await apis[1].request('POST', `/instances/${instanceId}/events/batch`, { events });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await eventually(async () => (recorder.eventIds().size === 40 ? true : undefined), 30_000, '40 arrivals');
    const starts = recorder.visits.map((v) => v.start).sort((a, b) => a - b);
    // Three workers each free to send would deliver 40 in well under a second; at 10/s they take about 4 s.
    const spread = starts[39] - starts[0];
    assert.ok(spread >= 3500, `40 at 10/s arrived over ${Math.round(spread)} ms`);
    for (let i = 10; i < 40; i++) {
      const window = starts[i] - starts[i - 10];
      assert.ok(
        window >= 850,
        `arrivals ${i - 10}..${i} within ${Math.round(window)} ms: over 10 in a second`,
      );
    }
    // The receiver has the last request before its outcome is written: wait for the log to show every outcome.
    const listed = await eventually(
      async () => {
        const all = await deliveries(instanceId);
        return all.every((d) => d.status !== 'pending') ? all : undefined;
      },
      10_000,
      'every outcome recorded',
    );
    assert.deepEqual(
      listed.map((d) => [d.status, d.attempt_count]),
      Array(40).fill(['delivered', 1]),
      'waiting for the limit is no attempt',
    );
  });

  test('5,000 events across 20 webhooks, one worker SIGKILLed half-way: every event delivered', async (t) => {
    const hooks = await Promise.all(Array.from({ length: 20 }, () => webhook(20)));
    const expected = new Map(hooks.map((h) => [h.recorder, new Set<string>()]));
    const batches = hooks.flatMap((h, i) =>
      Array.from({ length: 5 }, (_, b) => {
        const events = Array.from({ length: 50 }, () => message(eventId(`s${i}b${b}`)));
        for (const e of events) expected.get(h.recorder)?.add(e.event_id);
        return { instanceId: h.instanceId, events };
      }),
    );
    const arrived = () => hooks.reduce((n, h) => n + h.recorder.eventIds().size, 0);
    let next = 0;
    const publisher = async (k: number) => {
      while (next < batches.length) {
        const { instanceId, events } = batches[next++];
        const res = await apis[k % 2].request('POST', `/instances/${instanceId}/events/batch`, { events });
        assert.equal(res.status, 202, JSON.stringify(res.body));
      }
    };
    const publishing = Promise.all([0, 1, 2, 3].map(publisher));

    await eventually(async () => (arrived() >= 2500 ? true : undefined), 120_000, 'half of the deliveries');
    const killed = await workers[0].kill('SIGKILL', 'group');
    assert.equal(killed.signal, 'SIGKILL');
    const atKill = arrived();
    await publishing;

    await eventually(
      async () => (arrived() === 5000 ? true : undefined),
      180_000,
      'all 5,000 deliveries at the receivers',
    );
    for (const h of hooks) {
      assert.deepEqual(
        h.recorder.eventIds(),
        expected.get(h.recorder),
        'exactly the published events arrived',
      );
      assert.deepEqual(h.recorder.overlaps(), [], 'no delivery was attempted by two workers at once');
      // A repeat is the killed worker's delivery taken over once its lease (DELIVERY_TIMEOUT_MS + 5 s) ran out. The
      // lease starts at the claim; the first attempt may start up to HOLD_MS later (a held claim), and reach the
      // receiver up to 4 s later still with five Herald processes on two loaded cores (3.5 s seen). A second sender
      // while the lease holds would repeat far sooner.
      const repeat = h.recorder.shortestRepeat();
      if (repeat.ms < LEASE_MS - HOLD_MS - 4000) {
        // Say what Herald logged for it: a retry after a failed attempt, or a second sender.
        const log = await apis[0].request(
          'GET',
          `/instances/${h.instanceId}/deliveries?event_id=${repeat.eventId}`,
        );
        const [d] = log.body.deliveries ?? [];
        const detail =
          d && (await apis[0].request('GET', `/instances/${h.instanceId}/deliveries/${d.delivery_id}`));
        assert.fail(
          `a delivery was attempted again after ${Math.round(repeat.ms)} ms: ${JSON.stringify(detail?.body ?? log.body)}`,
        );
      }
    }
    await eventually(
      async () => {
        for (const h of hooks) {
          const listed = await deliveries(h.instanceId);
          if (listed.length !== 250 || listed.some((d) => d.status !== 'delivered')) return undefined;
        }
        return true;
      },
      30_000,
      'every delivery logged as delivered',
    );
    const requests = hooks.reduce((n, h) => n + h.recorder.visits.length, 0);
    t.diagnostic(
      `worker killed with ${atKill} of 5000 arrived; ${requests} requests in all: ${requests - 5000} duplicates ` +
        `(at least once), each at least ${Math.round(Math.min(...hooks.map((h) => h.recorder.shortestRepeat().ms)))} ms after the first attempt`,
    );
    for (const w of workers.slice(1)) assert.equal(w.child.exitCode, null, 'the other workers still run');
  });
});
