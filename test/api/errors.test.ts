/** The error contract (SPEC §4): one JSON shape, the right status and code, messages that name the field. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ADMIN_KEY,
  type Reply,
  type RequestOptions,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';

const HOOK = { destination_url: 'http://127.0.0.1:9/hook', events: ['message'] };

let h: TestHerald;
let guarded: TestHerald;
let instanceId: string;
let webhooks: string;
before(async () => {
  [h, guarded] = await Promise.all([
    startTestHerald(),
    startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'false' }),
  ]);
  instanceId = await h.createInstance('errors');
  webhooks = `/instances/${instanceId}/webhooks`;
});
after(() => Promise.all([h.close(), guarded.close()]));

/** Exactly `{ success: false, error: { code, message, details } }`, nothing more, no stack trace. */
function assertError(r: Reply, status: number, code: string, message?: RegExp | string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'success']);
  assert.equal(r.body.success, false);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message']);
  assert.equal(r.body.error.code, code);
  assert.ok(r.body.error.message.length > 0);
  assert.doesNotMatch(r.body.error.message, /\n\s+at /, 'no stack trace');
  assert.ok(Array.isArray(r.body.error.details));
  for (const d of r.body.error.details) assert.deepEqual(Object.keys(d).sort(), ['field', 'message']);
  if (typeof message === 'string') assert.equal(r.body.error.message, message);
  else if (message) assert.match(r.body.error.message, message);
}

/** A JSON text nesting `depth` arrays (the outermost object counts as one level). */
const nestedHook = (depth: number) =>
  `{"destination_url":"http://127.0.0.1:9/hook","events":["message"],"x":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

describe('error shape and status codes', () => {
  const cases: [string, () => Promise<Reply>, number, string][] = [
    ['missing key', () => h.request('GET', '/instances', { key: null }), 401, 'unauthorized'],
    ['unknown route', () => h.request('GET', '/nope'), 404, 'not_found'],
    ['unknown instance', () => h.request('GET', '/instances/ins_0000000000000000000000'), 404, 'not_found'],
    [
      'invalid field',
      () => h.request('POST', webhooks, { body: { ...HOOK, events: [] } }),
      400,
      'invalid_request',
    ],
    [
      'text/plain body',
      () => h.request('POST', webhooks, { rawBody: '{}', contentType: 'text/plain' }),
      415,
      'unsupported_media_type',
    ],
    [
      'private destination',
      async () => {
        const id = await guarded.createInstance();
        return guarded.request('POST', `/instances/${id}/webhooks`, { body: HOOK });
      },
      422,
      'destination_not_allowed',
    ],
  ];
  for (const [what, call, status, code] of cases) {
    it(`${what} → ${status} ${code}`, async () => assertError(await call(), status, code));
  }

  it('a forbidden operation → 403 forbidden', async () => {
    const key = (await h.request('POST', `/instances/${instanceId}/keys`)).body.key;
    assertError(await h.request('POST', '/instances', { key }), 403, 'forbidden');
  });

  it('a badly encoded or overlong path segment → 400 in the same shape', async () => {
    for (const path of [
      '/instances/%zz',
      `/instances/ins_${'a'.repeat(101)}`,
      `/instances/ins_${'a'.repeat(600)}`,
    ]) {
      assertError(await h.request('GET', path), 400, 'invalid_request', /instance_id|path/);
    }
  });

  it('names the method and path of an unknown route', async () => {
    assertError(await h.request('GET', '/nope?x=1'), 404, 'not_found', 'no route for GET /nope');
    assertError(await h.request('PUT', webhooks, { body: HOOK }), 404, 'not_found', /PUT/);
  });
});

describe('request bodies', () => {
  const post = (options: RequestOptions) => h.request('POST', webhooks, options);

  it('malformed JSON → 400', async () => {
    for (const raw of ['{"destination_url":', '{destination_url: 1}', "{'a':1}", '[1,]']) {
      assertError(await post({ rawBody: raw }), 400, 'invalid_request', /^body: malformed JSON/);
    }
  });

  it('an empty body with a JSON content type is no body: the required fields are named (400, not 500)', async () => {
    assertError(await post({ rawBody: '' }), 400, 'invalid_request', /^destination_url: is required/);
    assertError(await post({ rawBody: ' \n' }), 400, 'invalid_request', /^destination_url: is required/);
  });

  it('an empty body with a JSON content type is accepted where the body is optional', async () => {
    const r = await h.request('POST', `/instances/${instanceId}/deliveries/redeliver`, { rawBody: '' });
    assert.equal(r.status, 202);
    assert.equal(r.body.redelivered, 0);
  });

  it('invalid UTF-8 → 400', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"destination_url":"http://127.0.0.1:9/'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","events":["message"]}'),
    ]);
    assertError(
      await post({ rawBody: new Uint8Array(bytes) }),
      400,
      'invalid_request',
      'body: is not valid UTF-8',
    );
    // An overlong encoding of "/" and a lone surrogate are refused as well.
    for (const bad of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
    ]) {
      const body = Buffer.concat([Buffer.from('{"x":"'), Buffer.from(bad), Buffer.from('"}')]);
      assertError(await post({ rawBody: new Uint8Array(body) }), 400, 'invalid_request', /UTF-8/);
    }
  });

  it('a body that is not application/json → 415', async () => {
    for (const contentType of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/jsonp',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await post({ rawBody: JSON.stringify(HOOK), contentType });
      assertError(r, 415, 'unsupported_media_type', /application\/json/);
    }
    // JSON with a charset parameter or a +json suffix is still JSON.
    for (const contentType of [
      'application/json; charset=utf-8',
      'Application/JSON;charset=UTF-8',
      'application/merge-patch+json',
    ]) {
      assert.equal((await post({ rawBody: JSON.stringify(HOOK), contentType })).status, 201, contentType);
    }
    // A body without any Content-Type is not taken for JSON either.
    const res = await fetch(h.url + webhooks, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: new TextEncoder().encode(JSON.stringify(HOOK)),
    });
    assertError(
      { status: res.status, body: await res.json(), headers: res.headers },
      415,
      'unsupported_media_type',
    );
  });

  it('a webhook body over 256 KiB → 413 payload_too_large', async () => {
    const count = async () => (await h.request('GET', webhooks)).body.webhooks.length;
    const before = await count();
    assertError(
      await post({ body: { ...HOOK, client_sign_secret: 'x'.repeat(256 * 1024) } }),
      413,
      'payload_too_large',
    );
    assert.equal(await count(), before);
    // Just under the limit the body is read and judged on its fields instead.
    const under = await post({ body: { ...HOOK, client_sign_secret: 'x'.repeat(255 * 1024) } });
    assertError(under, 400, 'invalid_request', /^client_sign_secret: /);
  });

  it('JSON nested 65 levels deep → 400; 60 levels is not refused for depth', async () => {
    assertError(
      await post({ rawBody: nestedHook(65) }),
      400,
      'invalid_request',
      'body: JSON is nested deeper than 64 levels',
    );
    const deep = await post({ rawBody: nestedHook(60) });
    assertError(deep, 400, 'invalid_request', 'x: is not a known field');
    assert.equal((await post({ rawBody: nestedHook(64) })).body.error.message, 'x: is not a known field');
  });

  it('brackets inside strings do not count as nesting', async () => {
    const name = `[{"\\${'['.repeat(100)}`;
    const r = await h.request('POST', '/instances', { body: { name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal((await h.request('GET', `/instances/${r.body.instance_id}`)).body.instance.name, name);
  });
});

describe('messages name the field and the rule', () => {
  it('names an array element: events[1]', async () => {
    const r = await h.request('POST', webhooks, { body: { ...HOOK, events: ['message', 'mesage'] } });
    assertError(r, 400, 'invalid_request', 'events[1]: unknown event kind "mesage"');
    assert.deepEqual(r.body.error.details, [{ field: 'events[1]', message: 'unknown event kind "mesage"' }]);
  });

  it('lists every complaint in details and counts the rest in the message', async () => {
    // Shape errors (types, required, unknown fields) are all reported together…
    const shape = await h.request('POST', webhooks, {
      body: { events: ['message'], ignore_status: 'yes', client_sign_secret: 'x'.repeat(1025) },
    });
    assertError(shape, 400, 'invalid_request', /^\w+: .+ \(and 2 more\)$/);
    assert.deepEqual(shape.body.error.details.map((d: any) => d.field).sort(), [
      'client_sign_secret',
      'destination_url',
      'ignore_status',
    ]);
    // …and so are the rules checked once the shape is right.
    const rules = await h.request('POST', webhooks, {
      body: { destination_url: 'ftp://x.example/', events: ['nope', 'message', 'message'] },
    });
    assertError(
      rules,
      400,
      'invalid_request',
      'destination_url: unknown scheme "ftp:"; use http, https, amqp, amqps, nats, tls, redis or rediss (and 2 more)',
    );
    assert.deepEqual(rules.body.error.details, [
      {
        field: 'destination_url',
        message: 'unknown scheme "ftp:"; use http, https, amqp, amqps, nats, tls, redis or rediss',
      },
      { field: 'events[0]', message: 'unknown event kind "nope"' },
      { field: 'events[2]', message: 'duplicate event kind "message"' },
    ]);
  });

  it('lists at most 50 complaints, and the message says how many more there were', async () => {
    // 400 events of made-up kinds in one batch: one complaint each.
    const events = Array.from({ length: 400 }, (_, i) => ({ event: `made.up.${i}`, payload: { n: i } }));
    const batch = await h.request('POST', `/instances/${instanceId}/events/batch`, { body: { events } });
    assertError(
      batch,
      400,
      'invalid_request',
      /^events\[0\]\.event: unknown event kind "made\.up\.0".* \(and 399 more: details lists the first 50, and 350 more are not listed\)$/,
    );
    assert.equal(batch.body.error.details.length, 50);
    assert.equal(batch.body.error.details[49].field, 'events[49].event');
    // Thousands of unknown fields, each a complaint of the schema validator.
    const body: Record<string, unknown> = { ...HOOK };
    for (let i = 0; i < 5000; i++) body[`unknown_field_${i}_${'x'.repeat(20)}`] = i;
    const sent = JSON.stringify(body);
    const fields = await h.request('POST', webhooks, { rawBody: sent });
    assertError(
      fields,
      400,
      'invalid_request',
      /\(and 4999 more: details lists the first 50, and 4950 more are not listed\)$/,
    );
    assert.equal(fields.body.error.details.length, 50);
    assert.match(fields.body.error.details[0].message, /is not a known field/);
    const answer = JSON.stringify(fields.body).length;
    assert.ok(answer < 10_000, `a ${sent.length}-byte body got a ${answer}-byte answer`);
  });

  it('an overlong field name is cut short in the answer, like a quoted value', async () => {
    const name = `x${'y'.repeat(100_000)}`;
    const r = await h.request('POST', webhooks, { body: { ...HOOK, [name]: 1 } });
    assertError(r, 400, 'invalid_request', /^xy+…: is not a known field$/);
    assert.ok(JSON.stringify(r.body).length < 1000);
  });

  it('names a missing field', async () => {
    const r = await h.request('POST', webhooks, { body: { events: ['message'] } });
    assertError(r, 400, 'invalid_request', 'destination_url: is required');
    assert.deepEqual(r.body.error.details, [{ field: 'destination_url', message: 'is required' }]);
  });

  it('names an unknown field', async () => {
    const r = await h.request('POST', webhooks, { body: { ...HOOK, destinationUrl: 'http://127.0.0.1:9/' } });
    assertError(r, 400, 'invalid_request', 'destinationUrl: is not a known field');
  });

  it('names a wrongly typed field', async () => {
    const r = await h.request('POST', webhooks, { body: { ...HOOK, ignore_status: 'true' } });
    assertError(r, 400, 'invalid_request', 'ignore_status: must be true or false');
  });

  it('a malformed id or query value states the rule, not a regular expression', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      [
        'GET',
        `/instances/${instanceId}/deliveries?limit=abc`,
        undefined,
        /^limit: must be an integer from 1 to 200$/,
      ],
      ['GET', '/instances/xyz', undefined, /^instance_id: must be ins_ followed by 1 to 100 letters/],
      [
        'POST',
        `/instances/${instanceId}/events`,
        { event: 'presence.update', event_id: 'e1', payload: {} },
        /^event_id: must be evt_/,
      ],
    ];
    for (const [method, path, body, message] of cases) {
      assertError(await h.request(method, path, { body }), 400, 'invalid_request', message);
    }
  });

  it("says the validator's rules as sentences: the values allowed, what to choose", async () => {
    const cases: [string, string, unknown, string][] = [
      [
        'GET',
        `/instances/${instanceId}/deliveries?status=done`,
        undefined,
        'status: must be one of pending, delivered, failed',
      ],
      ['POST', webhooks, { ...HOOK, events: [] }, 'events: choose at least one event kind'],
      ['POST', `/instances/${instanceId}/events/batch`, { events: [] }, 'events: choose at least one event'],
      [
        'POST',
        webhooks,
        { ...HOOK, client_sign_secret: 'x'.repeat(1025) },
        'client_sign_secret: must be at most 1024 characters',
      ],
      [
        'POST',
        `/instances/${instanceId}/deliveries/redeliver`,
        { since: 'yesterday' },
        'since: must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z',
      ],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await h.request(method, path, { body });
      assertError(r, 400, 'invalid_request', message);
      assert.doesNotMatch(JSON.stringify(r.body), /must NOT|equal to constant|anyOf/);
    }
  });

  it('a trailing slash names the same resource, never a malformed id', async () => {
    const list = await h.request('GET', '/instances/');
    assert.equal(list.status, 200);
    assert.ok(list.body.instances.some((i: any) => i.instance_id === instanceId));
    assert.equal((await h.request('GET', `/instances/${instanceId}/`)).body.instance.instance_id, instanceId);
    assert.equal((await h.request('GET', `${webhooks}/`)).status, 200);
  });

  it('a body that is not an object names the body', async () => {
    for (const raw of ['[]', '"x"', '42', 'null']) {
      assertError(await h.request('POST', webhooks, { rawBody: raw }), 400, 'invalid_request', /^body: /);
    }
  });
});
