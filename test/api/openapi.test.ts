import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHerald, type TestHerald } from '../support/herald.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

/** Every endpoint SPEC §3, §5, §6, §7, §8 and §11 name. */
const SPEC_ROUTES = [
  'GET /healthz',
  'GET /readyz',
  'POST /instances',
  'GET /instances',
  'GET /instances/{instance_id}',
  'DELETE /instances/{instance_id}',
  'POST /instances/{instance_id}/keys',
  'GET /instances/{instance_id}/keys',
  'DELETE /instances/{instance_id}/keys/{key_id}',
  'GET /instances/{instance_id}/webhooks',
  'POST /instances/{instance_id}/webhooks',
  'GET /instances/{instance_id}/webhooks/{webhook_id}',
  'PATCH /instances/{instance_id}/webhooks/{webhook_id}',
  'DELETE /instances/{instance_id}/webhooks/{webhook_id}',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/enabled',
  'POST /instances/{instance_id}/events',
  'POST /instances/{instance_id}/events/batch',
  'GET /instances/{instance_id}/deliveries',
  'GET /instances/{instance_id}/deliveries/{delivery_id}',
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver',
  'POST /instances/{instance_id}/deliveries/redeliver',
  // issue 8: media uploads and their signed download links
  'POST /instances/{instance_id}/media',
  'GET /media/{media_id}',
];

test('/openapi.json is generated from the route schemas and lists exactly the endpoints of the spec', async () => {
  const r = await h.request('GET', '/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.body.openapi, '3.1.0');
  const documented = Object.entries(r.body.paths as Record<string, Record<string, unknown>>).flatMap(
    ([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
  );
  assert.deepEqual(documented.sort(), [...SPEC_ROUTES].sort());
});

test('request bodies and responses are described with the shared schemas', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  const create = body.paths['/instances/{instance_id}/webhooks'].post;
  const props = create.requestBody.content['application/json'].schema.properties;
  assert.ok(props.destination_url && props.events && props.client_sign_secret && props.ignore_status);
  assert.ok(create.responses['201'] && create.responses['400']);
  for (const name of ['Instance', 'Webhook', 'Delivery', 'Attempt', 'DeliveryDetail', 'Error']) {
    assert.ok(body.components.schemas[name], `components.schemas.${name}`);
  }
});

test('/openapi.json needs a key; health endpoints do not', async () => {
  assert.equal((await h.request('GET', '/openapi.json', { key: null })).status, 401);
  assert.deepEqual((await h.request('GET', '/healthz', { key: null })).body, { success: true, status: 'ok' });
  assert.deepEqual((await h.request('GET', '/readyz', { key: null })).body, {
    success: true,
    status: 'ready',
  });
});

test('readyz answers 500 when the database is gone', async () => {
  const other = await startTestHerald();
  await other.herald.store.close();
  const r = await other.request('GET', '/readyz', { key: null });
  assert.equal(r.status, 500);
  assert.equal(r.body.error.code, 'internal');
  await other.close();
});
