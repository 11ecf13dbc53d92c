import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { registeredRoutes } from '../../src/api/docs.ts';
import { ERROR_STATUS, type ErrorCode } from '../../src/api/errors.ts';
import { operationId } from '../../src/api/operation-ids.ts';
import { EVENT_KINDS } from '../../src/domain/event-kinds.ts';
import { payloadSchema } from '../../src/domain/events.ts';
import { samplePayload } from '../../src/domain/samples.ts';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { declaredCauses, fillPath, operations, schemaValidator } from '../support/openapi-doc.ts';
import { TestReceiver } from '../support/receiver.ts';

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
  'POST /instances/{instance_id}/engine/evolution',
  'POST /instances/{instance_id}/engine/evolution/{event}',
  'GET /instances/{instance_id}/deliveries',
  'GET /instances/{instance_id}/deliveries/{delivery_id}',
  'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver',
  'POST /instances/{instance_id}/deliveries/redeliver',
  // issue 8: media uploads and their signed download links
  'POST /instances/{instance_id}/media',
  'GET /media/{media_id}',
  // portal links: one instance's session page for a customer
  'POST /instances/{instance_id}/portal-links',
  'GET /instances/{instance_id}/portal-links',
  'DELETE /instances/{instance_id}/portal-links/{link_id}',
  'GET /portal-link',
  // sources: queues Herald consumes events from
  'POST /sources',
  'GET /sources',
  'GET /sources/{source_id}',
  'PATCH /sources/{source_id}',
  'DELETE /sources/{source_id}',
  'GET /sources/{source_id}/parked',
];

/** Endpoints beyond the SPEC's tables: the test delivery and /metrics (issue 7). */
const MORE_ROUTES = [
  'POST /instances/{instance_id}/webhooks/{webhook_id}/test',
  'POST /instances/{instance_id}/webhooks/{webhook_id}/rotate-secret',
  'GET /metrics',
  // a webhook's deliveries per hour, for the session page's charts
  'GET /instances/{instance_id}/webhooks/{webhook_id}/stats',
];
/** Registered but not API operations: the document itself, its page, and the session page with its files. */
const HIDDEN_ROUTES = [
  'GET /',
  'GET /docs',
  'GET /docs/vendor/{file}',
  'GET /openapi.json',
  'GET /portal',
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

test('every operation has an operationId of its own, a camelCase verb and noun, for generated clients', async () => {
  const ids = new Map<string, string>();
  for (const [name, op] of await documentedOperations()) {
    assert.match(op.operationId ?? '', /^[a-z]+[A-Z][A-Za-z]+$/, `${name}: operationId ${op.operationId}`);
    assert.equal(
      ids.get(op.operationId),
      undefined,
      `${name} and ${ids.get(op.operationId)} share ${op.operationId}`,
    );
    ids.set(op.operationId, name);
  }
  assert.equal(ids.get('createWebhook'), 'POST /instances/{instance_id}/webhooks');
  assert.equal(ids.get('listDeliveries'), 'GET /instances/{instance_id}/deliveries');
  assert.equal(
    ids.get('redeliverDelivery'),
    'POST /instances/{instance_id}/deliveries/{delivery_id}/redeliver',
  );
});

test('a route without an operationId in the table stops the server from starting, naming where to add it', () => {
  assert.throws(
    () => operationId('POST', '/instances/{instance_id}/frobnicate'),
    /POST \/instances\/\{instance_id\}\/frobnicate has no operationId: add one to OPERATION_IDS in src\/api\/operation-ids\.ts/,
  );
});

test("the document names this Herald's public URL as its server", async () => {
  const { body } = await h.request('GET', '/openapi.json');
  assert.deepEqual(
    body.servers.map((s: { url: string }) => s.url),
    [h.url],
  );
});

test('the media upload describes its body: the raw bytes, of any media type', async () => {
  const { body } = await h.request('GET', '/openapi.json');
  const upload = body.paths['/instances/{instance_id}/media'].post;
  assert.equal(upload.requestBody.required, true);
  assert.deepEqual(Object.keys(upload.requestBody.content), ['*/*']);
  assert.match(upload.requestBody.description, /Content-Type is its media type/);
  // As described: bytes with their own Content-Type, no JSON.
  const instance_id = await h.createInstance('upload');
  const res = await fetch(`${body.servers[0].url}/instances/${instance_id}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'audio/ogg; codecs=opus' },
    body: new Uint8Array([0x4f, 0x67, 0x67, 0x53]),
  });
  assert.equal(res.status, 201);
  assert.equal(((await res.json()) as { mimetype: string }).mimetype, 'audio/ogg; codecs=opus');
});

test('every operation has a summary, its success response, and the errors every route of its kind can give', async () => {
  for (const [name, op] of await documentedOperations()) {
    assert.ok(op.summary, `${name}: summary`);
    const statuses = Object.keys(op.responses);
    assert.ok(
      statuses.some((s) => s.startsWith('2')),
      `${name}: a 2xx response`,
    );
    const isPublic = Array.isArray(op.security) && op.security.length === 0;
    const expected = isPublic ? ['500'] : ['401', '429', '500'];
    // A JSON body can be malformed, too large or of another type; the media upload takes any type of bytes.
    if (op.requestBody?.content['application/json']) expected.push('400', '413', '415');
    if (op.parameters?.some((p: any) => p.in === 'path' && p.schema?.pattern)) expected.push('400');
    for (const s of expected) assert.ok(statuses.includes(s), `${name}: ${s} in ${statuses}`);
  }
});

test('each operation names the errors of its own handler, and only those', async () => {
  const causes = new Map(
    (await documentedOperations()).map(([name, op]) => [name, [...declaredCauses(op).keys()]]),
  );
  const has = (name: string, cause: string) => causes.get(name)?.includes(cause) ?? false;
  // The audit's findings: 422 on webhook configuration, and no error that cannot happen.
  assert.ok(has('POST /instances/{instance_id}/webhooks', 'destination_not_allowed'));
  assert.ok(has('PATCH /instances/{instance_id}/webhooks/{webhook_id}', 'destination_not_allowed'));
  assert.ok(!has('POST /instances', 'webhook_not_found'));
  assert.deepEqual(
    Object.keys((await documentedOperations()).find(([n]) => n === 'GET /instances')?.[1].responses).sort(),
    ['200', '401', '429', '500', '503'],
  );
  const media = (await documentedOperations()).find(([n]) => n === 'GET /media/{media_id}')?.[1];
  assert.deepEqual(Object.keys(media?.responses).sort(), [
    '200',
    '206',
    '304',
    '403',
    '404',
    '410',
    '416',
    '500',
  ]);
  assert.deepEqual(Object.keys(media?.responses['416'].headers), ['Content-Range']);
});

/** The names a response falls back to when its route says nothing of it. */
const UNNAMED = ['OK', 'Created', 'Accepted', 'Default Response'];

test('every response says what it is and has an example; each error, one per cause, of its status', async () => {
  for (const [name, op] of await documentedOperations()) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      const where = `${name} ${status}`;
      assert.ok(response.description && !UNNAMED.includes(response.description), `${where}: named`);
      const json = response.content?.['application/json'];
      if (Number(status) >= 400) {
        const examples = Object.entries(json?.examples ?? {}) as [string, any][];
        assert.ok(examples.length > 0, `${where}: an example per cause`);
        for (const [cause, example] of examples) {
          assert.ok(example.summary, `${where} ${cause}: says when`);
          assert.equal(
            ERROR_STATUS[example.value.error.code as ErrorCode],
            Number(status),
            `${where} ${cause}`,
          );
        }
      } else if (json) {
        assert.ok(json.example !== undefined, `${where}: an example`);
        assert.notDeepEqual(json.example, {}, where);
      }
    }
  }
  const { body } = await h.request('GET', '/openapi.json');
  const list = body.paths['/instances/{instance_id}/deliveries'].get.responses['200'];
  assert.equal(list.description, 'A page of deliveries, newest first');
  assert.equal(list.content['application/json'].example.deliveries[0].attempt_count, 2);
});

test('every example, of a request body or of a response, is valid for its schema', async () => {
  const { body: doc } = await h.request('GET', '/openapi.json');
  const check = schemaValidator(doc);
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const media: [string[], any][] = [];
      const jsonBody = op.requestBody?.content['application/json'];
      if (jsonBody) media.push([['requestBody'], jsonBody]);
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        const json = response.content?.['application/json'];
        if (json) media.push([['responses', status], json]);
      }
      for (const [where, json] of media) {
        const values =
          json.example !== undefined
            ? [json.example]
            : Object.values(json.examples ?? {}).map((e: any) => e.value);
        const name = `${method.toUpperCase()} ${path} ${where.join(' ')}`;
        assert.ok(values.length > 0, `${name}: an example`);
        for (const value of values) {
          const pointer = ['paths', path, method, ...where, 'content', 'application/json', 'schema'];
          assert.equal(check(pointer, value), null, `${name}: ${JSON.stringify(value)}`);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 150, `${checked} examples checked`);
});

test('every request body example is accepted by a real Herald (2xx)', async () => {
  const { body: doc } = await h.request('GET', '/openapi.json');
  const receiver = await TestReceiver.start();
  try {
    // PATCH /instances/{id} sets an engine HMAC key, which the engine's webhook would then demand: its own instance.
    const withBodies = operations(doc).filter((o) => o.op.requestBody?.content['application/json']);
    assert.ok(withBodies.length >= 11, withBodies.map((o) => o.name).join(', '));
    for (const { name, method, path, op } of withBodies) {
      const instance_id = await h.createInstance('examples');
      const webhook_id = await h.createWebhook(instance_id, { destination_url: receiver.url, events: ['*'] });
      const example = op.requestBody.content['application/json'].example;
      assert.ok(example, `${name}: an example`);
      const source = path.includes('{source_id}')
        ? await h.request('POST', '/sources', { body: example })
        : null;
      const source_id = source?.body.source.source_id;
      const r = await h.request(
        method,
        fillPath(path, { instance_id, webhook_id, source_id, event: 'messages-upsert' }),
        {
          body: example,
        },
      );
      if (source_id) await h.request('DELETE', `/sources/${source_id}`);
      assert.ok(r.status >= 200 && r.status < 300, `${name}: ${r.status} ${JSON.stringify(r.body)}`);
    }
  } finally {
    await receiver.close();
  }
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
  const names = ['Instance', 'Webhook', 'Delivery', 'Attempt', 'DeliveryDetail', 'Error'];
  const envelopes = ['Success', 'InstanceResponse', 'WebhookResponse', 'EventAccepted'];
  for (const name of [...names, ...envelopes]) {
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
    const example = unavailable.content['application/json'].examples.database_unavailable.value;
    assert.equal(example.error.code, 'unavailable', path);
    assert.ok(unavailable.headers['Retry-After'], path);
  }
});
