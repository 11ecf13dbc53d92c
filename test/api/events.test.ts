/** SPEC §7: publishing events, batches, idempotency, durability, routing and payload validation. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, type TestContext, test } from 'node:test';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

const evtId = () => `evt_test_${randomBytes(8).toString('hex')}`;
const msg = (overrides: Record<string, unknown> = {}) => ({
  event: 'message',
  payload: messagePayload(overrides),
});

/** A receiver (closed when the test ends) behind a webhook of `ins`; returns both. */
async function hook(t: TestContext, ins: string, config: Record<string, unknown>, enable = true) {
  const r = await TestReceiver.start();
  t.after(() => r.close());
  const id = await h.createWebhook(ins, { destination_url: r.url, ...config }, enable);
  return { r, id };
}

async function deliveries(ins: string, query = ''): Promise<any[]> {
  const res = await h.request('GET', `/instances/${ins}/deliveries?limit=200${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.deliveries;
}

/**
 * Publishes a later "marker" message, waits until each of `receivers` got it and nothing of `ins` is pending:
 * whatever was queued before has then arrived, so what a receiver lacks was never sent.
 */
async function marker(ins: string, receivers: TestReceiver[]) {
  const event_id = evtId();
  assert.equal((await h.publish(ins, { ...msg(), event_id })).status, 202);
  for (const r of receivers) {
    await eventually(async () => (r.received.some((x) => x.body.event_id === event_id) ? true : undefined));
  }
  await eventually(async () => ((await deliveries(ins, '&status=pending')).length === 0 ? true : undefined));
  return event_id;
}

const eventIds = (r: TestReceiver) => r.received.map((x) => x.body.event_id);
const batch = (ins: string, events: unknown[]) =>
  h.request('POST', `/instances/${ins}/events/batch`, { body: { events } });

function assertInvalid(res: { status: number; body: any }, field: string) {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.error.code, 'invalid_request');
  assert.match(res.body.error.message, new RegExp(field.replace(/[.[\]]/g, '\\$&')));
  assert.ok(
    res.body.error.details.some((d: any) => d.field === field),
    `details name ${field}: ${JSON.stringify(res.body.error.details)}`,
  );
}

describe('single publish', () => {
  test('202 with event_id and the count of enabled subscribers; the body is delivered as published', async (t) => {
    const ins = await h.createInstance();
    const a = await hook(t, ins, { events: ['message'] });
    const b = await hook(t, ins, { events: ['*'] });
    await hook(t, ins, { events: ['message'] }, false);
    await hook(t, ins, { events: ['session.status'] });

    const payload = messagePayload({ custom: { nested: [1, 'two', null] }, to: '4915100000@c.us' });
    const before = Date.now();
    const res = await h.publish(ins, { event: 'message', payload });
    const afterPublish = Date.now();
    assert.equal(res.status, 202);
    assert.match(res.body.event_id, /^evt_[A-Za-z0-9_-]{16,}$/);
    assert.deepEqual(res.body, { success: true, event_id: res.body.event_id, deliveries: 2 });

    for (const r of [a.r, b.r]) {
      const [got] = await r.waitFor(1);
      assert.deepEqual(Object.keys(got.body), ['event_id', 'event', 'instance_id', 'timestamp', 'payload']);
      const { timestamp, ...rest } = got.body;
      assert.deepEqual(rest, { event_id: res.body.event_id, event: 'message', instance_id: ins, payload });
      assert.ok(
        Number.isInteger(timestamp) && timestamp >= before && timestamp <= afterPublish,
        `${timestamp}`,
      );
    }
  });

  test('a given timestamp and event_id are carried into the delivered body', async (t) => {
    const ins = await h.createInstance();
    const { r } = await hook(t, ins, { events: ['message.unknown'] });
    const event_id = evtId();
    const payload = {
      message_id: 'msg_1',
      client_reference: 'o-1',
      to: '1555',
      type: 'text',
      error_code: 'TIMEOUT',
    };
    const sent = { event_id, event: 'message.unknown', timestamp: 1700000000123, payload };
    assert.deepEqual((await h.publish(ins, sent)).body, { success: true, event_id, deliveries: 1 });
    const [got] = await r.waitFor(1);
    assert.deepEqual(got.body, { ...sent, instance_id: ins });
  });
});

describe('batch', () => {
  test('results come back in order and every event is delivered', async (t) => {
    const ins = await h.createInstance();
    const { r } = await hook(t, ins, { events: ['message', 'message.ack'] });
    const given = evtId();
    const ack = { event: 'message.ack', payload: { id: 'm', from: 'a', to: 'b', ack: 3, ackName: 'READ' } };
    const events = [
      msg({ body: 'one' }),
      { ...msg({ body: 'two' }), event_id: given },
      ack,
      msg({ body: 'four' }),
    ];
    const res = await batch(ins, events);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const { success, results } = res.body;
    assert.equal(success, true);
    assert.equal(results[1].event_id, given);
    assert.deepEqual(
      results,
      results.map((x: any) => ({ event_id: x.event_id, deliveries: 1 })),
    );
    assert.equal(new Set(results.map((x: any) => x.event_id)).size, 4);
    await r.waitFor(4);
    // Each result belongs to the event at the same index.
    const sent = results.map(
      (x: any) => r.received.find((y) => y.body.event_id === x.event_id)?.body.payload,
    );
    assert.deepEqual(
      sent,
      events.map((e) => e.payload),
    );
  });

  test('at most 1000 events: 1001 are refused', async () => {
    const ins = await h.createInstance();
    const over = await batch(ins, Array(1001).fill(msg()));
    assert.equal(over.status, 400);
    assert.match(over.body.error.message, /^events: .*1000/);
    const full = await batch(ins, Array(1000).fill(msg()));
    assert.equal(full.status, 202);
    assert.equal(full.body.results.length, 1000);
  });

  test('an invalid event at index 3 names events[3] and stores nothing of the batch', async (t) => {
    const ins = await h.createInstance();
    const { r } = await hook(t, ins, { events: ['*'] });
    const bad = msg();
    delete (bad.payload as any).id;
    const cases = [
      { events: [msg(), msg(), msg(), bad, msg()], field: 'events[3].payload.id' },
      { events: [msg(), msg(), msg(), { ...msg(), event_id: 'nope_1' }], field: 'events[3].event_id' },
    ];
    for (const c of cases) {
      assertInvalid(await batch(ins, c.events), c.field);
    }
    assert.deepEqual(await deliveries(ins), []);
    const mark = await marker(ins, [r]);
    assert.deepEqual(eventIds(r), [mark]);
  });
});

describe('idempotency', () => {
  test('the same event_id twice: same answer, one delivery', async (t) => {
    const ins = await h.createInstance();
    const { r } = await hook(t, ins, { events: ['message'] });
    const event_id = evtId();
    const first = await h.publish(ins, { ...msg(), event_id });
    const second = await h.publish(ins, { ...msg(), event_id });
    assert.equal(second.status, 202);
    assert.deepEqual(second.body, first.body);
    assert.deepEqual(first.body, { success: true, event_id, deliveries: 1 });

    const twice = evtId();
    const res = await batch(
      ins,
      [twice, twice, event_id].map((id) => ({ ...msg(), event_id: id })),
    );
    assert.equal(res.status, 202);
    assert.deepEqual(res.body.results, [
      { event_id: twice, deliveries: 1 },
      { event_id: twice, deliveries: 1 },
      { event_id, deliveries: 1 },
    ]);
    const mark = await marker(ins, [r]);
    assert.deepEqual(eventIds(r).sort(), [event_id, twice, mark].sort());
    assert.equal((await deliveries(ins)).length, 3);
  });

  test('an event_id without the evt_ prefix is a 400', async () => {
    const ins = await h.createInstance();
    assertInvalid(await h.publish(ins, { ...msg(), event_id: 'abc_123' }), 'event_id');
  });

  test('an event_id already used by another instance is a 409, and nothing of the call is stored', async (t) => {
    const [one, two] = [await h.createInstance(), await h.createInstance()];
    await hook(t, two, { events: ['message'] });
    const event_id = evtId();
    assert.equal((await h.publish(one, { ...msg(), event_id })).status, 202);
    const single = await h.publish(two, { ...msg(), event_id });
    for (const res of [single, await batch(two, [msg(), { ...msg(), event_id }])]) {
      assert.equal(res.status, 409);
      assert.equal(res.body.error.code, 'conflict');
      assert.match(res.body.error.message, new RegExp(event_id));
    }
    assert.deepEqual(await deliveries(two), []);
  });
});

test('an acknowledged event survives a restart and is delivered', async (t) => {
  const env = { RETRY_SCHEDULE: '0.5,0.5,0.5,0.5,0.5' };
  const first = await startTestHerald(env);
  const r = await TestReceiver.start();
  t.after(() => r.close());
  let healthy = false;
  r.answer = () => ({ status: healthy ? 200 : 503 });
  const ins = await first.createInstance();
  await first.createWebhook(ins, { destination_url: r.url, events: ['message'] });
  const res = await first.publish(ins, msg());
  assert.equal(res.status, 202);
  await first.close({ keepData: true });

  healthy = true;
  const second = await startTestHerald(env, { dataDir: first.dataDir });
  t.after(() => second.close());
  const list = await second.request('GET', `/instances/${ins}/deliveries`);
  assert.deepEqual(
    list.body.deliveries.map((d: any) => d.event_id),
    [res.body.event_id],
  );
  const done = await eventually(async () => {
    const d = (await second.request('GET', `/instances/${ins}/deliveries`)).body.deliveries[0];
    return d.status === 'delivered' ? d : undefined;
  });
  assert.equal(done.event_id, res.body.event_id);
  assert.equal(r.received.at(-1)?.body.event_id, res.body.event_id);
});

describe('routing', () => {
  test('by kind, *, ignore_status and message vs message.any; disabled webhooks get nothing', async (t) => {
    const ins = await h.createInstance();
    const w = {
      msg: await hook(t, ins, { events: ['message'] }),
      any: await hook(t, ins, { events: ['message.any'] }),
      all: await hook(t, ins, { events: ['*'] }),
      ack: await hook(t, ins, { events: ['message.ack'] }),
      status: await hook(t, ins, { events: ['*'], ignore_status: false }),
      off: await hook(t, ins, { events: ['*'], ignore_status: false }, false),
    };
    const S = 'status@broadcast';
    const ackPayload = { id: 'm1', from: 'a@c.us', to: 'b@c.us', ack: 1, ackName: 'SERVER' };
    const cases: [string, Record<string, unknown>, (keyof typeof w)[]][] = [
      ['message', messagePayload(), ['msg', 'all', 'status']],
      ['message.any', messagePayload(), ['any', 'all', 'status']],
      ['message.any', messagePayload({ fromMe: true }), ['any', 'all', 'status']],
      ['message.ack', ackPayload, ['ack', 'all', 'status']],
      ['message', messagePayload({ from: S }), ['status']],
      ['message.any', messagePayload({ to: S }), ['status']],
      ['message.ack', { ...ackPayload, to: S }, ['status']],
      ['message.revoked', { from: 'a@c.us', to: 'b@c.us', revokedMessageId: 'x', chat_id: S }, ['status']],
    ];
    const expected = new Map<string, string[]>();
    for (const [event, payload, targets] of cases) {
      const res = await h.publish(ins, { event, payload });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.deliveries, targets.length, `${event} ${JSON.stringify(payload)}`);
      expected.set(res.body.event_id, targets);
    }
    const mark = await marker(ins, [w.msg.r, w.all.r, w.status.r]);
    expected.set(mark, ['msg', 'all', 'status']);
    const queued = await deliveries(ins);
    for (const [name, { r, id }] of Object.entries(w)) {
      const want = [...expected].filter(([, to]) => to.includes(name as keyof typeof w)).map(([e]) => e);
      assert.deepEqual(eventIds(r).sort(), want.sort(), `${name} received`);
      const mine = queued.filter((d) => d.webhook_id === id).map((d) => d.event_id);
      assert.deepEqual(mine.sort(), want.sort(), `${name} deliveries`);
    }
  });

  test('events that occur while a webhook is disabled are not queued for it', async (t) => {
    const ins = await h.createInstance();
    const { r, id } = await hook(t, ins, { events: ['message'] }, false);
    assert.equal((await h.publish(ins, msg())).body.deliveries, 0);
    const on = await h.request('POST', `/instances/${ins}/webhooks/${id}/enabled`, {
      body: { enabled: true },
    });
    assert.equal(on.status, 200);
    const mark = await marker(ins, [r]);
    assert.deepEqual(eventIds(r), [mark]);
    assert.deepEqual(
      (await deliveries(ins)).map((d) => d.event_id),
      [mark],
    );
  });
});

describe('payload validation', () => {
  const noId = messagePayload();
  delete noId.id;
  const ack = { id: 'm1', from: 'a@c.us', to: 'b@c.us', ackName: 'READ' };
  const unknown = { message_id: 'msg_1', client_reference: 'r', to: '1555', type: 'text', error_code: 'X' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['message missing id', { event: 'message', payload: noId }, 'payload.id'],
    ['from_phone non-digits', msg({ from_phone: '+49 170' }), 'payload.from_phone'],
    ['media while hasMedia is false', msg({ media: { status: 'failed' } }), 'payload.media'],
    ['fromMe as text', msg({ fromMe: 'false' }), 'payload.fromMe'],
    ['message.ack unknown ack', { event: 'message.ack', payload: { ...ack, ack: 7 } }, 'payload.ack'],
    ['message.unknown bad error_code', { event: 'message.unknown', payload: unknown }, 'payload.error_code'],
    [
      'session.status in lower case',
      { event: 'session.status', payload: { status: 'on' } },
      'payload.status',
    ],
    ['an unknown event kind', { ...msg(), event: 'mesage' }, 'event'],
    ['a timestamp past the last date', { ...msg(), timestamp: 1e20 }, 'timestamp'],
  ];
  for (const [name, body, field] of cases) {
    test(`${name} is a 400 naming ${field}`, async () => {
      assertInvalid(await h.publish(await h.createInstance(), body), field);
    });
  }

  test('what engines send is accepted: no from, fromMe true in a self-chat, hasMedia without media, new statuses', async (t) => {
    const ins = await h.createInstance();
    const { r } = await hook(t, ins, { events: ['message', 'session.status'] });
    const noFrom = messagePayload();
    delete noFrom.from;
    delete noFrom.from_phone;
    const bodies = [
      { event: 'message', payload: noFrom },
      msg({
        id: 'true_15557654321@c.us_SELF',
        fromMe: true,
        from: '15550001111@c.us',
        from_phone: undefined,
      }),
      msg({ hasMedia: true }),
      { event: 'session.status', payload: { status: 'PASSKEY_REQUIRED' } },
    ];
    for (const body of bodies) assert.equal((await h.publish(ins, body)).status, 202, JSON.stringify(body));
    const got = await r.waitFor(4);
    const byKind = (i: number) =>
      got.find((g) => g.body.payload.id === bodies[i].payload.id && g.body.event === bodies[i].event);
    assert.equal(byKind(1)?.body.payload.from_phone, '15550001111');
    assert.deepEqual(got.find((g) => g.body.payload.hasMedia)?.body.payload.media, { status: 'unavailable' });
    const instance = (await h.request('GET', `/instances/${ins}`)).body.instance;
    assert.equal(instance.status, 'PASSKEY_REQUIRED');
  });

  test('an event of 256 KiB or more is a 413 and is not stored', async (t) => {
    const ins = await h.createInstance();
    await hook(t, ins, { events: ['message'] });
    const sizes: [number, number][] = [
      [250 * 1024, 202],
      [256 * 1024, 413],
      [300 * 1024, 413],
    ];
    for (const [size, status] of sizes) {
      const res = await h.publish(ins, msg({ body: 'x'.repeat(size) }));
      assert.equal(res.status, status, `${size}: ${JSON.stringify(res.body).slice(0, 200)}`);
      if (status === 413) assert.equal(res.body.error.code, 'payload_too_large');
    }
    assert.equal((await deliveries(ins)).length, 1);
  });
});

test('session.status updates the instance status and phone', async () => {
  const ins = await h.createInstance();
  const instance = async () => (await h.request('GET', `/instances/${ins}`)).body.instance;
  const steps: [Record<string, unknown> | null, string, string | null][] = [
    [null, 'STOPPED', null],
    [{ status: 'SCAN_QR_CODE' }, 'SCAN_QR_CODE', null],
    [{ status: 'WORKING', phone: '15550001111' }, 'WORKING', '15550001111'],
  ];
  for (const [payload, status, phone] of steps) {
    if (payload) assert.equal((await h.publish(ins, { event: 'session.status', payload })).status, 202);
    const got = await instance();
    assert.deepEqual([got.status, got.phone], [status, phone]);
  }
});
