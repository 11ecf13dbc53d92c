/**
 * WAHA's own webhook pointed at Herald: POST /instances/{id}/engine/waha with WAHA's body as WAHA sends it.
 * Authentication (bearer key, engine HMAC), idempotency by the envelope's id, session.status from `me`, unknown
 * kinds, and bad input named by field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { engineEventId } from '../../src/domain/waha-envelope.ts';
import { postWaha, wahaBody } from '../support/engine.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

/** A receiver (closed when the test ends) behind an enabled webhook of `ins`. */
async function hook(t: TestContext, ins: string, events: string[], config: Record<string, unknown> = {}) {
  const r = await TestReceiver.start();
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events, ...config });
  return r;
}

const text = (overrides: Record<string, unknown> = {}) => ({
  id: 'false_491701234567@c.us_3EB0C767D26A1D8F4A2B',
  timestamp: 1763719200,
  from: '491701234567@c.us',
  fromMe: false,
  to: '15550001111@c.us',
  body: 'Hallo 👋',
  hasMedia: false,
  ack: 1,
  _data: { notifyName: 'Anna', id: { fromMe: false, remote: '491701234567@c.us' } },
  ...overrides,
});

const instanceOf = async (ins: string) => (await h.request('GET', `/instances/${ins}`)).body.instance;

describe('the engine endpoint takes WAHA bodies', () => {
  test('a message is delivered in the delivery format: an event_id of the instance and envelope, its timestamp, from_phone filled', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message']);
    const body = wahaBody('message', text());
    const res = await postWaha(h.url, ins, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const eventId = engineEventId(ins, { envelopeId: body.id.slice(4) });
    assert.deepEqual(res.body, { success: true, event_id: eventId, deliveries: 1 });
    const [got] = await r.waitFor(1);
    assert.deepEqual(Object.keys(got.body), ['event_id', 'event', 'instance_id', 'timestamp', 'payload']);
    assert.equal(got.body.event_id, eventId);
    assert.equal(got.body.timestamp, body.timestamp);
    assert.equal(got.body.instance_id, ins);
    assert.deepEqual(got.body.payload, { ...text(), from_phone: '491701234567' });
  });

  test('the same envelope twice (WAHA retrying) is stored and delivered once', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message']);
    const body = wahaBody('message', text());
    const first = await postWaha(h.url, ins, body);
    const again = await postWaha(h.url, ins, body);
    assert.equal(first.status, 202);
    assert.deepEqual(again.body, first.body);
    await r.waitFor(1);
    const list = await h.request('GET', `/instances/${ins}/deliveries`);
    assert.equal(list.body.deliveries.length, 1);
  });

  test('an id with or without evt_ names the same event; a body without one gets a new event id', async (t) => {
    const ins = await h.createInstance();
    await hook(t, ins, ['message']);
    const bare = await postWaha(
      h.url,
      ins,
      wahaBody('message', text(), { id: '01jn7k0d9x2c5m8v3b6n1q4w7e' }),
    );
    assert.equal(bare.body.event_id, engineEventId(ins, { envelopeId: '01jn7k0d9x2c5m8v3b6n1q4w7e' }));
    const prefixed = await postWaha(
      h.url,
      ins,
      wahaBody('message', text(), { id: 'evt_01jn7k0d9x2c5m8v3b6n1q4w7e' }),
    );
    assert.equal(prefixed.body.event_id, bare.body.event_id);
    const { id: _, ...noId } = wahaBody('message', text({ id: 'false_491701234567@c.us_NOID' }));
    const fresh = await postWaha(h.url, ins, noId);
    assert.equal(fresh.status, 202);
    assert.match(fresh.body.event_id, /^evt_/);
  });

  test('session.status takes the phone from me.id, and the instance follows, unknown statuses included', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['session.status']);
    const statuses = [{ status: 'STARTING', timestamp: 1700000002000 }];
    const res = await postWaha(h.url, ins, wahaBody('session.status', { status: 'WORKING', statuses }));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [got] = await r.waitFor(1);
    assert.deepEqual(got.body.payload, { status: 'WORKING', statuses, phone: '15550001111' });
    assert.deepEqual(
      [(await instanceOf(ins)).status, (await instanceOf(ins)).phone],
      ['WORKING', '15550001111'],
    );

    const passkey = {
      status: 'PASSKEY_REQUIRED',
      statuses,
      data: { challenge: '9WVUYm9AsQ', timeout: 60000 },
    };
    assert.equal((await postWaha(h.url, ins, wahaBody('session.status', passkey, { me: null }))).status, 202);
    const [, second] = await r.waitFor(2);
    assert.deepEqual(second.body.payload, passkey, 'without me, nothing is added');
    assert.equal((await instanceOf(ins)).status, 'PASSKEY_REQUIRED');
  });

  test('a kind outside the catalog is accepted and reaches only webhooks subscribed to *', async (t) => {
    const ins = await h.createInstance();
    const all = await hook(t, ins, ['*']);
    const some = await hook(t, ins, ['message', 'session.status']);
    const res = await postWaha(h.url, ins, wahaBody('state.change', 'CONNECTED'));
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.deliveries, 1);
    const [got] = await all.waitFor(1);
    assert.equal(got.body.event, 'state.change');
    assert.equal(got.body.payload, 'CONNECTED');
    assert.equal((await postWaha(h.url, ins, wahaBody('message', text()))).status, 202);
    await eventually(async () => (some.received.length === 1 ? true : undefined));
    assert.deepEqual(
      some.received.map((x) => x.body.event),
      ['message'],
    );
  });

  test('engine, environment, metadata and session are not delivered; a story reaches only ignore_status false', async (t) => {
    const ins = await h.createInstance();
    const stories = await hook(t, ins, ['message'], { ignore_status: false });
    const plain = await hook(t, ins, ['message']);
    const story = text({ from: 'status@broadcast', participant: '491701234567@c.us', body: 'my story' });
    const res = await postWaha(h.url, ins, wahaBody('message', story));
    assert.equal(res.body.deliveries, 1);
    const [got] = await stories.waitFor(1);
    assert.equal(got.body.payload.from_phone, '491701234567', 'a story is by its participant');
    for (const name of ['engine', 'environment', 'metadata', 'session', 'me'])
      assert.equal(got.body[name], undefined);
    assert.equal(plain.received.length, 0);
  });
});

describe('engine HMAC key', () => {
  test('PATCH sets it write-only; the instance view says whether one is set; null removes it', async () => {
    const ins = await h.createInstance();
    const set = await h.request('PATCH', `/instances/${ins}`, {
      body: { name: 'Front desk', engine_hmac_key: 'front-desk-hmac-key' },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.instance.name, 'Front desk');
    assert.equal(set.body.instance.engine_hmac_key_set, true);
    assert.equal(JSON.stringify(set.body).includes('front-desk-hmac-key'), false, 'the key is never shown');
    const cleared = await h.request('PATCH', `/instances/${ins}`, { body: { engine_hmac_key: null } });
    assert.equal(cleared.body.instance.engine_hmac_key_set, false);
    assert.equal(cleared.body.instance.name, 'Front desk', 'an omitted name stays');
    const bad = await h.request('PATCH', `/instances/${ins}`, { body: { engine_hmac_key: 7 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /engine_hmac_key/);
  });

  test('right, wrong, missing, and a body changed after signing', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message']);
    await h.request('PATCH', `/instances/${ins}`, { body: { engine_hmac_key: 'my-secret-key' } });
    const body = wahaBody('message', text());

    const missing = await postWaha(h.url, ins, body);
    assert.equal(missing.status, 401);
    assert.match(missing.body.error.message, /X-Webhook-Hmac: is required/);
    const wrong = await postWaha(h.url, ins, body, { hmacKey: 'another-key' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.error.message, /does not match/);
    const raw = JSON.stringify(body);
    const signed = await postWaha(h.url, ins, body, { hmacKey: 'my-secret-key' });
    const headers = { 'x-webhook-hmac': '', 'x-webhook-hmac-algorithm': 'sha512' };
    headers['x-webhook-hmac'] = (await import('node:crypto'))
      .createHmac('sha512', 'my-secret-key')
      .update(raw)
      .digest('hex');
    const changed = await postWaha(h.url, ins, raw.replace('Hallo', 'Hallx'), { headers });
    assert.equal(changed.status, 401, 'the signature covers the exact bytes');
    assert.equal(signed.status, 202, JSON.stringify(signed.body));
    await r.waitFor(1);
    const list = await h.request('GET', `/instances/${ins}/deliveries`);
    assert.equal(list.body.deliveries.length, 1, 'a refused call stored nothing');
  });

  test("WAHA's documented example: the HMAC of its body with its key", async () => {
    const { engineHmac } = await import('../../src/domain/engine-hmac.ts');
    assert.equal(
      engineHmac('my-secret-key', '{"event":"message","session":"default","engine":"WEBJS"}'),
      '208f8a55dde9e05519e898b10b89bf0d0b3b0fdf11fdbf09b6b90476301b98d8097c462b2b17a6ce93b6b47a136cf2e78a33a63f6752c2c1631777076153fa89',
    );
  });

  test('the bearer key still comes first: none is a 401, another instance’s a 403', async () => {
    const ins = await h.createInstance();
    assert.equal((await postWaha(h.url, ins, wahaBody('message', text()), { key: null })).status, 401);
    const other = await h.createInstance();
    const key = (await h.request('POST', `/instances/${other}/keys`)).body.key;
    assert.equal((await postWaha(h.url, ins, wahaBody('message', text()), { key })).status, 403);
    assert.equal((await postWaha(h.url, other, wahaBody('message', text()), { key })).status, 202);
  });
});

describe('bad engine input is a 400 naming the field', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a message without id', wahaBody('message', text({ id: undefined })), /^payload\.id: is required/],
    [
      'fromMe as a string',
      wahaBody('message', text({ fromMe: 'false' })),
      /^payload\.fromMe: must be true or false/,
    ],
    [
      'an ack of 7',
      wahaBody('message.ack', { id: 'x', ack: 7, ackName: 'READ' }),
      /^payload\.ack: must be an integer from -1/,
    ],
    ['a payload that is not an object', wahaBody('message', [1, 2]), /^payload: must be a JSON object/],
    ['no event', { ...wahaBody('message', text()), event: undefined }, /^event: is required/],
    ['an id with a space', wahaBody('message', text(), { id: 'evt_a b' }), /^id: must be 1 to 100/],
    ['a timestamp as text', wahaBody('message', text(), { timestamp: 'now' }), /^timestamp: must be a time/],
    [
      'a media url that is no URL',
      wahaBody('message', text({ hasMedia: true, media: { url: 'files/x.jpg' } })),
      /^payload\.media\.url: must be an absolute http/,
    ],
  ];
  for (const [name, body, message] of cases) {
    test(name, async () => {
      const ins = await h.createInstance();
      const res = await postWaha(h.url, ins, body);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error.message, message);
    });
  }
});
