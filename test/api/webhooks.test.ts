/** Webhooks (seed §4, SPEC §6): create, read, full-replacement PATCH, the enabled operation, delete, the destination guard. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Reply, startTestHerald, type TestHerald } from '../support/herald.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PUBLIC_URL = 'https://93.184.215.14/hooks/herald';
const HOOK = { destination_url: 'http://127.0.0.1:9/hook', events: ['message', 'message.ack'] };
const WEBHOOK_FIELDS = `client_sign_secret_set created_at destination_url disabled_at disabled_reason enabled
  events filter headers health ignore_status instance_id ordering previous_secret_until rate_limit standard_webhooks
  updated_at
  webhook_id`.split(/\s+/);
const URL_2048 = `http://127.0.0.1/${'a'.repeat(2031)}`;
const UNKNOWN_WEBHOOK = 'whk_0000000000zzzzzzzzzzzzzzzz';

let h: TestHerald;
let ins: string;
before(async () => {
  h = await startTestHerald();
  ins = await h.createInstance('webhooks');
});
after(() => h.close());

function assertError(r: Reply, status: number, code: string, message?: RegExp | string): void {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'success']);
  assert.equal(r.body.success, false);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message']);
  assert.equal(r.body.error.code, code);
  if (typeof message === 'string') assert.equal(r.body.error.message, message);
  else if (message) assert.match(r.body.error.message, message);
}

/** A 400 whose message starts with the field and whose details name it. */
function assertInvalid(r: Reply, field: string, rule?: RegExp): void {
  assertError(r, 400, 'invalid_request');
  assert.ok(r.body.error.message.startsWith(`${field}: `), `${field}: ${r.body.error.message}`);
  const detail = r.body.error.details.find((d: any) => d.field === field);
  assert.ok(detail, JSON.stringify(r.body.error.details));
  if (rule) assert.match(detail.message, rule);
}

/** A Webhook with exactly the documented fields, and never the secret. */
function assertWebhook(w: any, expected: Record<string, unknown>): void {
  assert.deepEqual(Object.keys(w).sort(), WEBHOOK_FIELDS);
  assert.match(w.webhook_id, /^whk_[A-Za-z0-9_-]{16,}$/);
  assert.match(w.created_at, ISO);
  assert.match(w.updated_at, ISO);
  assert.ok(w.updated_at >= w.created_at);
  for (const [k, v] of Object.entries(expected)) assert.deepEqual(w[k], v, k);
}

function api(t: TestHerald, instanceId: string) {
  const base = `/instances/${instanceId}/webhooks`;
  return {
    create: (body: unknown) => t.request('POST', base, { body }),
    list: () => t.request('GET', base),
    get: (id: string) => t.request('GET', `${base}/${id}`),
    patch: (id: string, body: unknown) => t.request('PATCH', `${base}/${id}`, { body }),
    enabled: (id: string, body?: unknown) => t.request('POST', `${base}/${id}/enabled`, { body }),
    remove: (id: string) => t.request('DELETE', `${base}/${id}`),
  };
}
const wh = () => api(h, ins);

const fields = (r: Reply) => r.body.error.details.map((d: any) => d.field);
const ids = (r: Reply) => r.body.webhooks.map((w: any) => w.webhook_id);

/** `{ success: true, webhook }` → the webhook. */
function webhookOf(r: Reply): any {
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['success', 'webhook']);
  assert.equal(r.body.success, true);
  return r.body.webhook;
}

async function created(body: Record<string, unknown> = HOOK, t = wh()): Promise<string> {
  const r = await t.create(body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['success', 'webhook_id']);
  assert.equal(r.body.success, true);
  return r.body.webhook_id;
}

describe('create and read', () => {
  it('creates a disabled webhook and returns it with every field but the secret', async () => {
    const secret = `s3cret-${crypto.randomUUID()}`;
    const id = await created({ ...HOOK, client_sign_secret: secret });
    const one = webhookOf(await wh().get(id));
    assertWebhook(one, {
      webhook_id: id,
      instance_id: ins,
      destination_url: HOOK.destination_url,
      events: HOOK.events,
      ignore_status: true,
      enabled: false,
      client_sign_secret_set: true,
      disabled_reason: null,
      disabled_at: null,
    });
    assert.equal(one.created_at, one.updated_at);
    const list = await wh().list();
    assert.equal(list.status, 200);
    assert.deepEqual(Object.keys(list.body).sort(), ['success', 'webhooks']);
    assert.deepEqual(list.body.webhooks[ids(list).indexOf(id)], one);
    for (const w of list.body.webhooks) assertWebhook(w, { instance_id: ins });
    assert.ok(!JSON.stringify(list.body).includes(secret));
  });

  for (const [what, extra, expected] of [
    ['"*" alone', { events: ['*'] }, { events: ['*'] }],
    ['ignore_status false', { ignore_status: false }, { ignore_status: false }],
    ['an empty secret (no secret)', { client_sign_secret: '' }, { client_sign_secret_set: false }],
    ['a 1024-character secret', { client_sign_secret: 'k'.repeat(1024) }, { client_sign_secret_set: true }],
    ['a 2048-character URL', { destination_url: URL_2048 }, { destination_url: URL_2048 }],
  ] as const) {
    it(`accepts ${what}`, async () => {
      const id = await created({ ...HOOK, ...extra });
      assertWebhook(webhookOf(await wh().get(id)), { enabled: false, ...expected });
    });
  }
});

describe('validation', () => {
  /** [what, body change, field named, rule, create only] */
  const cases: [string, Record<string, unknown>, string, RegExp, boolean?][] = [
    [
      'ftp URL',
      { destination_url: 'ftp://files.example/' },
      'destination_url',
      /unknown scheme "ftp:"; use http, https/,
    ],
    ['relative URL', { destination_url: '/hook' }, 'destination_url', /absolute http or https/],
    ['scheme-relative URL', { destination_url: '//127.0.0.1/hook' }, 'destination_url', /absolute/],
    ['user:password@', { destination_url: 'http://u:p@127.0.0.1/' }, 'destination_url', /user information/],
    ['user@', { destination_url: 'https://u@127.0.0.1/' }, 'destination_url', /user information/],
    ['URL over 2048 chars', { destination_url: `${URL_2048}b` }, 'destination_url', /2048/],
    ['URL not a string', { destination_url: 42 }, 'destination_url', /string/],
    ['missing destination_url', { destination_url: undefined }, 'destination_url', /required/],
    ['missing events', { events: undefined }, 'events', /required/],
    ['empty events', { events: [] }, 'events', /^choose at least one event kind$/],
    ['unknown kind', { events: ['message', 'mesage'] }, 'events[1]', /unknown event kind "mesage"/],
    ['duplicate kind', { events: ['message', 'message.ack', 'message'] }, 'events[2]', /duplicate/],
    ['"*" with others', { events: ['message', '*'] }, 'events', /alone/],
    ['non-string kind', { events: ['message', 7] }, 'events[1]', /string/],
    ['secret over 1024', { client_sign_secret: 'k'.repeat(1025) }, 'client_sign_secret', /1024/],
    ['non-boolean ignore_status', { ignore_status: 'false' }, 'ignore_status', /^must be true or false$/],
    ['enabled: true', { enabled: true }, 'enabled', /enabled/],
    ['enabled: false', { enabled: false }, 'enabled', /enabled/],
    ['unknown field', { destinationUrl: 'http://127.0.0.1/' }, 'destinationUrl', /not a known field/],
    ['clear_client_sign on create', { clear_client_sign: true }, 'clear_client_sign', /PATCH/, true],
    ['clear_client_sign false on create', { clear_client_sign: false }, 'clear_client_sign', /PATCH/, true],
  ];
  let target: string;
  before(async () => {
    target = await created();
  });

  for (const [what, change, field, rule, createOnly] of cases) {
    it(`${what} → 400 naming ${field}`, async () => {
      const body = { ...HOOK, ...change };
      assertInvalid(await wh().create(body), field, rule);
      if (!createOnly) assertInvalid(await wh().patch(target, body), field, rule);
    });
  }

  it('left the PATCH target unchanged', async () => {
    assertWebhook(webhookOf(await wh().get(target)), HOOK);
  });
});

describe('PATCH replaces the configuration', () => {
  it('sets every field, returns ignore_status to true and keeps the secret when omitted or empty', async () => {
    const id = await created({ ...HOOK, ignore_status: false, client_sign_secret: 'first' });
    const before = webhookOf(await wh().get(id));
    const next = { destination_url: 'http://127.0.0.1:10/other', events: ['session.status'] };
    const patched = webhookOf(await wh().patch(id, next));
    assertWebhook(patched, {
      ...next,
      webhook_id: id,
      ignore_status: true,
      client_sign_secret_set: true,
      enabled: false,
      created_at: before.created_at,
    });
    assert.deepEqual(webhookOf(await wh().get(id)), patched);
    const empty = webhookOf(await wh().patch(id, { ...next, client_sign_secret: '' }));
    assert.equal(empty.client_sign_secret_set, true);
  });

  it('clear_client_sign removes the secret; a new secret sets it again', async () => {
    const id = await created({ ...HOOK, client_sign_secret: 'first' });
    const secretSet = async (change: object) =>
      webhookOf(await wh().patch(id, { ...HOOK, ...change })).client_sign_secret_set;
    assert.equal(await secretSet({ clear_client_sign: true }), false);
    assert.equal(await secretSet({ client_sign_secret: 'again' }), true);
    const emptyAndClear = { client_sign_secret: '', clear_client_sign: true };
    assert.equal(await secretSet(emptyAndClear), false);
  });

  it('refuses a new secret together with clear_client_sign, changing nothing', async () => {
    const id = await created({ ...HOOK, client_sign_secret: 'first' });
    const r = await wh().patch(id, { ...HOOK, client_sign_secret: 'second', clear_client_sign: true });
    assertInvalid(r, 'clear_client_sign', /client_sign_secret/);
    assert.equal(webhookOf(await wh().get(id)).client_sign_secret_set, true);
  });

  it('never changes enabled', async () => {
    const id = await created();
    webhookOf(await wh().enabled(id, { enabled: true }));
    assert.equal(webhookOf(await wh().patch(id, { ...HOOK, events: ['*'] })).enabled, true);
    webhookOf(await wh().enabled(id, { enabled: false }));
    assert.equal(webhookOf(await wh().patch(id, HOOK)).enabled, false);
  });
});

describe('the enabled operation', () => {
  it('enables and disables', async () => {
    const id = await created();
    const on = webhookOf(await wh().enabled(id, { enabled: true }));
    assertWebhook(on, { webhook_id: id, enabled: true, disabled_reason: null, disabled_at: null });
    const off = webhookOf(await wh().enabled(id, { enabled: false }));
    assertWebhook(off, { webhook_id: id, enabled: false, disabled_reason: 'disabled' });
    assert.match(off.disabled_at, ISO);
    assert.deepEqual(webhookOf(await wh().get(id)), off);
    const again = webhookOf(await wh().enabled(id, { enabled: true }));
    assertWebhook(again, { enabled: true, disabled_reason: null, disabled_at: null });
  });

  for (const [what, body] of [
    ['no body', undefined],
    ['an empty object', {}],
    ['a string', { enabled: 'true' }],
    ['a number', { enabled: 1 }],
    ['null', { enabled: null }],
  ] as const) {
    it(`refuses ${what} → 400 naming enabled`, async () => {
      const id = await created();
      assertInvalid(await wh().enabled(id, body), 'enabled');
      assert.equal(webhookOf(await wh().get(id)).enabled, false);
    });
  }

  it('refuses extra fields', async () => {
    assertInvalid(await wh().enabled(await created(), { enabled: true, events: ['*'] }), 'events');
  });
});

describe('delete and unknown ids', () => {
  it('deletes, then every operation on it is 404', async () => {
    const id = await created();
    const r = await wh().remove(id);
    assert.deepEqual([r.status, r.body], [200, { success: true }]);
    assert.ok(!ids(await wh().list()).includes(id));
    await assertAll404(id);
  });

  /** GET, PATCH, enabled and DELETE of one webhook id. */
  const every = (id: string, t = wh()) =>
    Promise.all([t.get(id), t.patch(id, HOOK), t.enabled(id, { enabled: true }), t.remove(id)]);

  async function assertAll404(id: string, t = wh()): Promise<void> {
    for (const r of await every(id, t)) assertError(r, 404, 'not_found', `webhook ${id} does not exist`);
  }

  it('an unknown webhook id is 404, and so is one of another instance', async () => {
    await assertAll404(UNKNOWN_WEBHOOK);
    const elsewhere = await created(HOOK, api(h, await h.createInstance('other')));
    await assertAll404(elsewhere);
  });

  it('a malformed webhook id is 400 naming webhook_id', async () => {
    for (const bad of ['abc', 'ins_0000000000000000000000']) {
      for (const r of await every(bad)) assertInvalid(r, 'webhook_id');
    }
  });
});

describe('destination guard at save time', () => {
  const PRIVATE = ['http://127.0.0.1/', 'http://169.254.169.254/latest', 'http://[::1]/', 'http://10.0.0.1/'];
  const LOCALHOST = ['http://localhost/', 'http://LOCALHOST.:8080/x', 'http://api.localhost/'];

  async function assertRefused(t: TestHerald, urls: string[]): Promise<void> {
    const hooks = api(t, await t.createInstance('guard'));
    const existing = await created({ ...HOOK, destination_url: PUBLIC_URL }, hooks);
    for (const url of urls) {
      const body = { ...HOOK, destination_url: url };
      for (const r of [await hooks.create(body), await hooks.patch(existing, body)]) {
        assertError(
          r,
          422,
          'destination_not_allowed',
          /^destination_url: .+ (is never allowed \(.+\)|is not a globally reachable address \(.+\)); .*ALLOW_PRIVATE_DESTINATIONS.*ALLOWED_DESTINATION_CIDRS/,
        );
        assert.deepEqual(fields(r), ['destination_url'], url);
      }
    }
    assert.equal(webhookOf(await hooks.get(existing)).destination_url, PUBLIC_URL);
    assert.deepEqual(ids(await hooks.list()), [existing]);
  }

  describe('with ALLOW_PRIVATE_DESTINATIONS=false', () => {
    let guarded: TestHerald;
    before(async () => {
      guarded = await startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'false' });
    });
    after(() => guarded.close());

    it('refuses loopback, link-local, private and localhost destinations on create and PATCH', async () => {
      await assertRefused(guarded, [...PRIVATE, ...LOCALHOST]);
    });

    it('reports field errors (400) before judging the address (422)', async () => {
      const hooks = api(guarded, await guarded.createInstance('order'));
      const body = { destination_url: 'http://127.0.0.1/', events: ['nope'] };
      assertInvalid(await hooks.create(body), 'events[0]');
    });
  });

  describe('with ALLOW_PRIVATE_DESTINATIONS=true', () => {
    it('accepts private addresses', async () => {
      for (const url of PRIVATE) {
        const id = await created({ ...HOOK, destination_url: url });
        assert.equal(webhookOf(await wh().patch(id, { ...HOOK, destination_url: url })).destination_url, url);
      }
    });

    it('still refuses localhost names', async () => {
      await assertRefused(h, LOCALHOST);
    });
  });
});
