import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { registeredRoutes } from '../../src/api/docs.ts';
import { EVENT_KINDS } from '../../src/domain/event-kinds.ts';
import { payloadSchema } from '../../src/domain/events.ts';
import { samplePayload } from '../../src/domain/samples.ts';
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
  'PATCH /instances/{instance_id}',
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
  'POST /instances/{instance_id}/engine/waha',
  'GET /instances/{instance_id}/deliveries',
  'GET /instances/{instance_id}/deliveries/{delivery_id}',
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver',
  'POST /instances/{instance_id}/deliveries/redeliver',
  // issue 8: media uploads and their signed download links
  'POST /instances/{instance_id}/media',
  'GET /media/{media_id}',
];

/** Endpoints beyond the SPEC's tables: the test delivery and /metrics (issue 7). */
const MORE_ROUTES = [
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/rotate-secret',
  'GET /metrics',
];
/** Registered but not API operations: the document itself, its page, and the session page with its files. */
const HIDDEN_ROUTES = [
  'GET /',
  'GET /docs',
  'GET /docs/vendor/{file}',
  'GET /openapi.json',
  'GET /src',
  'GET /src/*',
  'GET /ui/instances/{instance_id}',
];

async function documentedOperations(): Promise<[string, Record<string, any>][]> {
  const r = await h.request('GET', '/openapi.json');
  assert.equal(r.status, 200);
  return Object.entries(r.body.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]): [string, Record<string, any>] => [
      `${method.toUpperCase()} ${path}`,
      op,
    ]),
  );
}

test("/openapi.json documents every registered route, and the spec's endpoints are all there", async () => {
  const documented = (await documentedOperations()).map(([name]) => name).sort();
  const registered = registeredRoutes(h.herald.server);
  const visible = registered.filter((r) => !r.hidden).map((r) => `${r.method} ${r.path}`);
  assert.deepEqual(documented, [...new Set(visible)].sort(), 'documented = registered');
  assert.deepEqual([...SPEC_ROUTES, ...MORE_ROUTES].sort(), documented);
  assert.deepEqual(
    registered
      .filter((r) => r.hidden)
      .map((r) => `${r.method} ${r.path}`)
      .sort(),
    HIDDEN_ROUTES,
  );
});

test('the document is valid OpenAPI 3.1', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  const result = await new Validator().validate(body);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
});

test('every operation has a summary, its success response, and the errors it can give', async () => {
  for (const [name, op] of await documentedOperations()) {
    assert.ok(op.summary, `${name}: summary`);
    const statuses = Object.keys(op.responses);
    assert.ok(
      statuses.some((s) => s.startsWith('2')),
      `${name}: a 2xx response`,
    );
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    const expected = isPublic ? ['500'] : ['401', '403', '500'];
    if (op.requestBody) expected.push('400', '413', '415');
    for (const s of expected) assert.ok(statuses.includes(s), `${name}: ${s} in ${statuses}`);
  }
});

test('every response is named and has an example, errors the error of their status', async () => {
  for (const [name, op] of await documentedOperations()) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      const where = `${name} ${status}`;
      assert.ok(response.description && response.description !== 'Default Response', `${where}: named`);
      const json = response.content?.['application/json'];
      if (!json) continue;
      assert.ok(json.example !== undefined, `${where}: an example`);
      if (Number(status) >= 400) {
        assert.equal(json.example.success, false, where);
        assert.match(json.example.error.code, /^[a-z_]+$/, where);
      } else {
        assert.notDeepEqual(json.example, {}, where);
      }
    }
  }
  const { body } = await h.request('GET', '/openapi.json');
  const list = body.paths['/instances/{instance_id}/deliveries'].get.responses['200'];
  assert.equal(list.description, 'OK');
  assert.equal(list.content['application/json'].example.deliveries[0].attempt_count, 2);
});

test("the shared resources' examples have exactly their schema's fields", async () => {
  const { body } = await h.request('GET', '/openapi.json');
  for (const name of ['Instance', 'Webhook', 'Delivery', 'Attempt', 'DeliveryDetail']) {
    const schema = body.components.schemas[name];
    assert.equal(schema.examples?.length, 1, `${name}: one example`);
    assert.deepEqual(Object.keys(schema.examples[0]).sort(), Object.keys(schema.properties).sort(), name);
  }
});

test('what Herald sends to a destination is described as OpenAPI webhooks, event kinds from the catalog', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  const delivery = body.webhooks.delivery.post;
  const schema = delivery.requestBody.content['application/json'].schema;
  assert.deepEqual(schema.required, ['event_id', 'event', 'instance_id', 'timestamp', 'payload']);
  assert.deepEqual(schema.properties.event.enum, [...EVENT_KINDS]);
  const example = delivery.requestBody.content['application/json'].example;
  assert.deepEqual(example.payload, samplePayload('message'));
  assert.deepEqual(
    delivery.parameters.map((p: any) => [p.name, p.in, p.required]),
    [
      ['X-Service-Event-Id', 'header', true],
      ['X-Service-Timestamp', 'header', true],
      ['X-Service-Signature', 'header', false],
    ],
  );
  assert.deepEqual(Object.keys(delivery.responses).sort(), ['2XX', '410', '429', 'default']);
});

test('each event kind is a webhook of its own, its payload the catalog’s schema, its example the kind’s sample', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  for (const kind of EVENT_KINDS) {
    const content = body.webhooks[kind]?.post.requestBody.content['application/json'];
    assert.ok(content, `webhooks["${kind}"]`);
    assert.deepEqual(content.schema.properties.payload, { $ref: `#/components/schemas/payload-${kind}` });
    assert.deepEqual(body.components.schemas[`payload-${kind}`], payloadSchema(kind), kind);
    assert.deepEqual(content.example.payload, samplePayload(kind), kind);
    assert.equal(content.example.event, kind);
  }
  // The message payload says what it names, as the rules do.
  const message = body.components.schemas['payload-message'];
  assert.deepEqual(message.required, ['id', 'fromMe']);
  assert.deepEqual(message.properties.fromMe, { type: 'boolean' });
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

test('readyz answers 503 when the database is gone', async () => {
  const other = await startTestHerald();
  await other.herald.store.close();
  const r = await other.request('GET', '/readyz', { key: null });
  assert.equal(r.status, 503);
  assert.equal(r.body.error.code, 'unavailable');
  assert.equal(r.headers.get('retry-after'), '5');
  await other.close();
});

test('ingest routes document 503, the database unavailable', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  for (const path of ['/instances/{instance_id}/events', '/instances/{instance_id}/events/batch']) {
    const unavailable = body.paths[path].post.responses['503'];
    assert.match(unavailable.description, /database .*Retry-After/, path);
    assert.equal(unavailable.content['application/json'].example.error.code, 'unavailable', path);
  }
});
