/**
 * Rights of the tenant boundary beyond the matrix (rights-matrix.test.ts): a route missing from the rights table
 * cannot be registered; key scopes, made and shown; what a publish key may do and may not; which instance fields a
 * manage key may change. On either store.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { installRightsTable } from '../../src/api/rights.ts';
import { wahaBody } from '../support/engine.ts';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';

describe('the rights table', () => {
  test('an authenticated route missing from it cannot be registered; a public one needs no entry', async () => {
    const app = Fastify();
    installRightsTable(app);
    const handler = async () => ({});
    assert.throws(
      () => app.get('/instances/:instance_id/secrets', handler),
      /GET \/instances\/:instance_id\/secrets needs an entry in the rights table \(ROUTE_RIGHTS, src\/api\/rights\.ts\)/,
    );
    assert.throws(() => app.delete('/instances/:instance_id/webhooks', handler), /needs an entry/);
    app.get('/instances/:instance_id/webhooks', handler);
    app.get('/brochure', { config: { public: true } }, handler);
    await app.ready();
    await app.close();
  });
});

describe('key scopes and what each may do', () => {
  let h: TestHerald;
  let ins: string;
  let manage: string;
  let publish: string;
  let webhook: string;
  before(async () => {
    h = await startTestHerald();
    ins = await h.createInstance('shop');
    webhook = await h.createWebhook(ins, { destination_url: 'http://127.0.0.1:9/hook', events: ['message'] });
    manage = (await h.request('POST', `/instances/${ins}/keys`)).body.key;
    const made = await h.request('POST', `/instances/${ins}/keys`, { body: { scope: 'publish' } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal(made.body.scope, 'publish');
    publish = made.body.key;
  });
  after(() => h.close());

  test('a key is made with scope manage (the default) or publish, and listed with it', async () => {
    const other = await h.createInstance('scopes');
    const make = (body?: unknown) => h.request('POST', `/instances/${other}/keys`, { body });
    const plain = await make();
    const explicit = await make({ scope: 'manage' });
    const publisher = await make({ scope: 'publish' });
    assert.deepEqual(
      [plain.body.scope, explicit.body.scope, publisher.body.scope],
      ['manage', 'manage', 'publish'],
    );
    const listed = (await h.request('GET', `/instances/${other}/keys`)).body.keys;
    assert.deepEqual(
      listed.map((k: { key_id: string; scope: string }) => [k.key_id, k.scope]).sort(),
      [
        [plain.body.key_id, 'manage'],
        [explicit.body.key_id, 'manage'],
        [publisher.body.key_id, 'publish'],
      ].sort(),
    );
  });

  test('a scope other than manage or publish, or another field, is a 400 naming it', async () => {
    for (const [body, field, message] of [
      [{ scope: 'admin' }, 'scope', /scope: must be one of manage, publish/],
      [{ scope: null }, 'scope', /^scope: /],
      [{ scope: 'publish', name: 'engine' }, 'name', /name/],
    ] as const) {
      const r = await h.request('POST', `/instances/${ins}/keys`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.details[0].field, field, JSON.stringify(r.body));
      assert.match(r.body.error.message, message);
    }
  });

  test('a publish key publishes (events, batch, the engine, media) and reads its instance', async () => {
    const as = { key: publish };
    const one = await h.request('POST', `/instances/${ins}/events`, {
      ...as,
      body: { event: 'message', payload: messagePayload() },
    });
    assert.equal(one.status, 202, JSON.stringify(one.body));
    const batch = await h.request('POST', `/instances/${ins}/events/batch`, {
      ...as,
      body: { events: [{ event: 'message', payload: messagePayload({ id: 'false_491701234567@c.us_B2' }) }] },
    });
    assert.equal(batch.status, 202, JSON.stringify(batch.body));
    const engine = await h.request('POST', `/instances/${ins}/engine/waha`, {
      ...as,
      body: wahaBody('message', messagePayload({ id: 'false_491701234567@c.us_C3' })),
    });
    assert.equal(engine.status, 202, JSON.stringify(engine.body));
    const media = await h.request('POST', `/instances/${ins}/media`, {
      ...as,
      rawBody: new Uint8Array(32),
      contentType: 'image/png',
    });
    assert.equal(media.status, 201, JSON.stringify(media.body));
    assert.equal((await h.request('GET', `/instances/${ins}`, as)).status, 200);
    const list = await h.request('GET', '/instances', as);
    assert.deepEqual(
      list.body.instances.map((i: { instance_id: string }) => i.instance_id),
      [ins],
    );
  });

  test('a publish key reads no webhook and no delivery, and changes nothing', async () => {
    const may = 'it may only publish events and read its instance';
    for (const [method, path, body, message] of [
      ['GET', `/instances/${ins}/webhooks`, undefined, `a publish key cannot read webhooks: ${may}`],
      [
        'GET',
        `/instances/${ins}/webhooks/${webhook}`,
        undefined,
        `a publish key cannot read webhooks: ${may}`,
      ],
      ['POST', `/instances/${ins}/webhooks`, {}, `a publish key cannot change webhooks: ${may}`],
      [
        'POST',
        `/instances/${ins}/webhooks/${webhook}/test`,
        {},
        `a publish key cannot change webhooks: ${may}`,
      ],
      [
        'GET',
        `/instances/${ins}/deliveries`,
        undefined,
        `a publish key cannot read the delivery log: ${may}`,
      ],
      ['POST', `/instances/${ins}/deliveries/redeliver`, {}, `a publish key cannot redeliver: ${may}`],
      ['POST', `/instances/${ins}/portal-links`, {}, `a publish key cannot manage portal links: ${may}`],
      ['PATCH', `/instances/${ins}`, { name: 'x' }, `a publish key cannot change the instance: ${may}`],
      [
        'GET',
        `/instances/${ins}/keys`,
        undefined,
        'a publish key cannot manage instance keys: this needs the admin key',
      ],
    ] as const) {
      const r = await h.request(method, path, { key: publish, body });
      assert.deepEqual([r.status, r.body.error?.message], [403, message], `${method} ${path}`);
    }
  });

  test('a manage key renames its instance; engine_hmac_key and engine_media_prefix are the admin’s (403 naming the field)', async () => {
    const patch = (body: unknown, key?: string) => h.request('PATCH', `/instances/${ins}`, { key, body });
    const renamed = await patch({ name: 'Shop line' }, manage);
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body));
    assert.equal(renamed.body.instance.name, 'Shop line');
    for (const [body, field] of [
      [{ engine_hmac_key: 'the-customers-own' }, 'engine_hmac_key'],
      [{ engine_hmac_key: null }, 'engine_hmac_key'],
      [{ name: 'Shop', engine_media_prefix: 'http://10.0.0.5/' }, 'engine_media_prefix'],
    ] as const) {
      const r = await patch(body, manage);
      assert.deepEqual(
        [r.status, r.body.error?.message],
        [403, `a manage key cannot change ${field}: only the admin key may`],
        JSON.stringify(body),
      );
    }
    const instance = (await h.request('GET', `/instances/${ins}`)).body.instance;
    assert.deepEqual(
      [instance.name, instance.engine_hmac_key_set],
      ['Shop line', false],
      'nothing refused was kept',
    );
    const byAdmin = await patch({ engine_hmac_key: 'the-operators-own' });
    assert.equal(byAdmin.status, 200);
    assert.equal(byAdmin.body.instance.engine_hmac_key_set, true);
    assert.equal((await patch({ engine_hmac_key: null })).status, 200);
  });
});
