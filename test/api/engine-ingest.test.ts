/**
 * The engine endpoint as ingest, where WAHA's own webhook sender loses or doubles events otherwise: the ingest rate
 * limit, idempotency per instance (the same envelope at two instances, an envelope without an id retried by its
 * X-Webhook-Request-Id), the engine's repeats dropped within ENGINE_DEDUPE_S, and large bodies up to
 * ENGINE_MAX_BODY_BYTES with every refusal named in the log and counted. On both stores.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import pino from 'pino';
import { engineEventId } from '../../src/domain/waha-envelope.ts';
import { postWaha, wahaBody } from '../support/engine.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

async function herald(t: TestContext, env: Record<string, string> = {}, options = {}): Promise<TestHerald> {
  const h = await startTestHerald(env, options);
  t.after(() => h.close());
  return h;
}

async function hook(t: TestContext, h: TestHerald, ins: string, events = ['message']) {
  const r = await TestReceiver.start();
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events });
  return r;
}

const message = (
  id = 'false_491701234567@c.us_3EB0C767D26A1D8F4A2B',
  extra: Record<string, unknown> = {},
) => ({
  id,
  timestamp: 1741249702,
  from: '491701234567@c.us',
  fromMe: false,
  to: '15550001111@c.us',
  body: 'Hallo 👋',
  hasMedia: false,
  ...extra,
});

const deliveriesOf = async (h: TestHerald, ins: string) =>
  (await h.request('GET', `/instances/${ins}/deliveries?limit=100`)).body.deliveries as {
    event_id: string;
  }[];

describe('the engine endpoint is ingest', () => {
  test('it shares the ingest rate limit, not the management one', async (t) => {
    const h = await herald(t, { RATE_LIMIT_MANAGEMENT: '2', RATE_LIMIT_INGEST: '1000' });
    const ins = await h.createInstance();
    const answers = [];
    for (let i = 0; i < 8; i++) {
      answers.push((await postWaha(h.url, ins, wahaBody('message', message(`false_1@c.us_M${i}`)))).status);
    }
    assert.deepEqual(answers, Array(8).fill(202));
  });

  test('a burst past the ingest limit is told to retry, as publishing is', async (t) => {
    const h = await herald(t, { RATE_LIMIT_MANAGEMENT: '1000', RATE_LIMIT_INGEST: '2' });
    const ins = await h.createInstance();
    const answers = [];
    for (let i = 0; i < 8; i++) {
      answers.push((await postWaha(h.url, ins, wahaBody('message', message(`false_1@c.us_M${i}`)))).status);
    }
    assert.ok(answers.includes(429), `answers: ${answers}`);
  });
});

describe('idempotency is per instance', () => {
  test('the same envelope at two instances is an event at each, with ids of its own; a retry at either is stored once', async (t) => {
    const h = await herald(t);
    const a = await h.createInstance('a');
    const b = await h.createInstance('b');
    const [ra, rb] = [await hook(t, h, a), await hook(t, h, b)];
    const body = wahaBody('message', message());
    const first = await postWaha(h.url, a, body);
    const second = await postWaha(h.url, b, body);
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.equal(second.status, 202, JSON.stringify(second.body));
    assert.equal(second.body.deliveries, 1);
    assert.notEqual(first.body.event_id, second.body.event_id);
    assert.equal(second.body.event_id, engineEventId(b, { envelopeId: body.id.slice(4) }));
    // WAHA retrying at the second instance: the same answer, nothing queued twice.
    assert.deepEqual((await postWaha(h.url, b, body)).body, second.body);
    const [gotA] = await ra.waitFor(1);
    const [gotB] = await rb.waitFor(1);
    assert.deepEqual([gotA.body.instance_id, gotB.body.instance_id], [a, b]);
    assert.equal((await deliveriesOf(h, b)).length, 1);
  });

  test('an envelope without an id is idempotent by its X-Webhook-Request-Id', async (t) => {
    const h = await herald(t);
    const ins = await h.createInstance();
    await hook(t, h, ins);
    const { id: _, ...noId } = wahaBody('message', message());
    const headers = { 'x-webhook-request-id': '0b5c8a1e-6a4f-4b8e-9c1d-2f3e4a5b6c7d' };
    const first = await postWaha(h.url, ins, noId, { headers });
    const retry = await postWaha(h.url, ins, noId, { headers });
    assert.equal(first.status, 202);
    assert.deepEqual(retry.body, first.body);
    assert.equal(first.body.event_id, engineEventId(ins, { requestId: headers['x-webhook-request-id'] }));
    assert.equal((await deliveriesOf(h, ins)).length, 1);
  });
});

describe("the engine's repeats", () => {
  test('a message reported again under a new envelope id is answered as a duplicate and stored once', async (t) => {
    const h = await herald(t);
    const ins = await h.createInstance();
    const r = await hook(t, h, ins, ['message', 'message.ack']);
    const first = await postWaha(h.url, ins, wahaBody('message', message()));
    const repeat = await postWaha(h.url, ins, wahaBody('message', message()));
    assert.deepEqual(first.body.deliveries, 1);
    assert.equal(repeat.status, 202);
    assert.deepEqual([repeat.body.deliveries, repeat.body.duplicate], [0, true]);
    // WAHA retrying the first envelope is still the first event, not a repeat of it.
    // Acks: each value is news; the same value again is a repeat.
    const ack = (n: number) => ({ id: message().id, from: '15550001111@c.us', to: message().from, ack: n });
    const acks = [];
    for (const n of [2, 2, 3]) acks.push((await postWaha(h.url, ins, wahaBody('message.ack', ack(n)))).body);
    assert.deepEqual(
      acks.map((b) => b.duplicate ?? false),
      [false, true, false],
    );
    await r.waitFor(3);
    assert.equal((await deliveriesOf(h, ins)).length, 3);
  });

  test('the first envelope retried after its repeat arrived is still stored (the repeat holds nothing)', async (t) => {
    const h = await herald(t);
    const ins = await h.createInstance();
    await hook(t, h, ins);
    const original = wahaBody('message', message());
    assert.equal((await postWaha(h.url, ins, original)).body.deliveries, 1);
    assert.equal((await postWaha(h.url, ins, wahaBody('message', message()))).body.duplicate, true);
    const retried = await postWaha(h.url, ins, original);
    assert.equal(retried.body.duplicate, undefined);
    assert.equal(retried.body.event_id, engineEventId(ins, { envelopeId: original.id.slice(4) }));
  });

  test('past ENGINE_DEDUPE_S the same report is news again; 0 keeps every one', async (t) => {
    let now = Date.UTC(2026, 10, 28, 12);
    const h = await herald(t, { ENGINE_DEDUPE_S: '60' }, { clock: () => now });
    const ins = await h.createInstance();
    await hook(t, h, ins);
    await postWaha(h.url, ins, wahaBody('message', message()));
    now += 59_000;
    assert.equal((await postWaha(h.url, ins, wahaBody('message', message()))).body.duplicate, true);
    now += 2_000;
    assert.equal((await postWaha(h.url, ins, wahaBody('message', message()))).body.deliveries, 1);

    const off = await herald(t, { ENGINE_DEDUPE_S: '0' });
    const ins2 = await off.createInstance();
    await hook(t, off, ins2);
    for (let i = 0; i < 2; i++) {
      assert.equal((await postWaha(off.url, ins2, wahaBody('message', message()))).body.deliveries, 1);
    }
  });

  test('the same message at another instance is no repeat', async (t) => {
    const h = await herald(t);
    const [a, b] = [await h.createInstance(), await h.createInstance()];
    await hook(t, h, a);
    await hook(t, h, b);
    assert.equal((await postWaha(h.url, a, wahaBody('message', message()))).body.deliveries, 1);
    assert.equal((await postWaha(h.url, b, wahaBody('message', message()))).body.deliveries, 1);
  });
});

describe('large engine bodies', () => {
  test('a 320 KB body (engine data included) is taken and delivered whole', async (t) => {
    const h = await herald(t);
    const ins = await h.createInstance();
    const r = await hook(t, h, ins);
    const big = message(undefined, { body: '😀'.repeat(40_000), _data: { blob: 'x'.repeat(160_000) } });
    const body = wahaBody('message', big);
    assert.ok(Buffer.byteLength(JSON.stringify(body)) > 320_000);
    const res = await postWaha(h.url, ins, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [got] = await r.waitFor(1);
    assert.equal(got.body.payload.body, big.body);
    assert.equal(got.body.payload._data.blob.length, 160_000);
  });

  test('above ENGINE_MAX_BODY_BYTES: 413, a warning naming the kind and the id, and a counter', async (t) => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
        done();
      },
    });
    const h = await herald(
      t,
      { ENGINE_MAX_BODY_BYTES: String(64 * 1024) },
      { logger: pino({ level: 'warn' }, sink) },
    );
    const ins = await h.createInstance();
    const body = wahaBody('message', message(undefined, { _data: { blob: 'x'.repeat(100_000) } }));
    const res = await postWaha(h.url, ins, body);
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.match(res.body.error.message, /ENGINE_MAX_BODY_BYTES/);
    const warning = lines.find((l) => /engine webhook body refused/.test(String(l.msg)));
    assert.ok(warning, JSON.stringify(lines));
    assert.deepEqual([warning.event, warning.id, warning.instance_id], ['message', body.id, ins]);
    const metrics = await h.request('GET', '/metrics');
    assert.match(String(metrics.body), /^herald_engine_bodies_too_large_total 1$/m);
    // Within the limit all is as ever.
    assert.equal((await postWaha(h.url, ins, wahaBody('message', message()))).status, 202);
  });
});
