/** Instances (SPEC §5), API keys and authentication (SPEC §3), and secrets at rest, against a real Herald. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY, eventually, type Reply, startTestHerald, type TestHerald } from '../support/herald.ts';
import { onPostgres, queryStored, schemaFor, storedValues } from '../support/postgres.ts';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const idOf = (prefix: string) => new RegExp(`^${prefix}_[A-Za-z0-9_-]{16,}$`);
const HOOK = { destination_url: 'http://127.0.0.1:9/hook', events: ['message'] };
const STATUS_EVENT = { event: 'session.status', payload: { status: 'WORKING' } };
const pluck = (list: any[], field: string) => list.map((x) => x[field]);

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

function assertError(r: Reply, status: number, code: string, message?: RegExp, what = ''): void {
  assert.equal(r.status, status, `${what} ${JSON.stringify(r.body)}`);
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'success']);
  assert.equal(r.body.success, false);
  assert.deepEqual(Object.keys(r.body.error).sort(), ['code', 'details', 'message']);
  assert.equal(r.body.error.code, code);
  assert.ok(Array.isArray(r.body.error.details));
  if (message) assert.match(r.body.error.message, message);
}

async function createKey(instanceId: string): Promise<{ key_id: string; key: string }> {
  const r = await h.request('POST', `/instances/${instanceId}/keys`);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(Object.keys(r.body).sort(), ['key', 'key_id', 'scope', 'success']);
  assert.equal(r.body.success, true);
  assert.equal(r.body.scope, 'manage', 'manage by default');
  assert.match(r.body.key_id, idOf('key'));
  assert.ok(typeof r.body.key === 'string' && r.body.key.length >= 32);
  return r.body;
}

function withDb<T>(use: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(join(h.dataDir, 'herald.db'), { readOnly: true });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** The column `v` of the first row of a read-only query, on the database Herald runs on. */
const storedValue = async (sql: string, ...params: string[]) =>
  onPostgres
    ? (await queryStored(schemaFor(h.dataDir), sql, params))[0]?.v
    : withDb((db) => db.prepare(sql).get(...params)?.v);

/** Every value of every row of every table, as text. */
const storedRows = async () =>
  onPostgres
    ? storedValues(schemaFor(h.dataDir))
    : withDb((db) =>
        db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
          .all()
          .flatMap(({ name }) => db.prepare(`SELECT * FROM "${String(name)}"`).all())
          .flatMap((row) => Object.values(row).map((v) => (v instanceof Uint8Array ? Buffer.from(v) : v)))
          .map(String),
      );

/** Neither a column of the database nor the bytes of its files (WAL included) hold `secret`. */
async function assertNotStored(secret: string): Promise<void> {
  const rows = await storedRows();
  assert.ok(rows.length > 0);
  assert.ok(!rows.some((v) => v.includes(secret)), 'a database column holds the secret in clear');
  for (const file of readdirSync(h.dataDir).filter((f) => f.startsWith('herald.db'))) {
    assert.equal(readFileSync(join(h.dataDir, file)).indexOf(secret), -1, `${file} holds the secret`);
  }
}

describe('authentication', () => {
  it('serves /healthz and /readyz without a key', async () => {
    for (const [path, status] of [
      ['/healthz', 'ok'],
      ['/readyz', 'ready'],
    ]) {
      const r = await h.request('GET', path, { key: null });
      assert.deepEqual([r.status, r.body], [200, { success: true, status }]);
    }
  });

  for (const [what, key] of [
    ['no Authorization header', null],
    ['an unknown key', 'hk_not-a-real-key'],
    ['an empty bearer', ''],
  ] as const) {
    it(`answers 401 unauthorized to ${what}`, async () => {
      for (const path of ['/instances', '/openapi.json', '/instances/ins_0000000000000000000000/webhooks']) {
        assertError(await h.request('GET', path, { key }), 401, 'unauthorized', /key/, path);
      }
      assertError(await h.request('POST', '/instances', { key }), 401, 'unauthorized');
    });
  }

  it('refuses a non-Bearer scheme carrying the admin key', async () => {
    const res = await fetch(`${h.url}/instances`, { headers: { authorization: `Basic ${ADMIN_KEY}` } });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, 'unauthorized');
  });

  describe('instance keys', () => {
    let own: string;
    let other: string;
    let key: { key_id: string; key: string };
    before(async () => {
      own = await h.createInstance('own');
      other = await h.createInstance('other');
      key = await createKey(own);
    });

    it('act on their own instance', async () => {
      const opts = { key: key.key };
      const got = await h.request('GET', `/instances/${own}`, opts);
      assert.equal(got.status, 200);
      assert.equal(got.body.instance.instance_id, own);
      const created = await h.request('POST', `/instances/${own}/webhooks`, { ...opts, body: HOOK });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const list = await h.request('GET', `/instances/${own}/webhooks`, opts);
      assert.equal(list.status, 200);
      assert.deepEqual(pluck(list.body.webhooks, 'webhook_id'), [created.body.webhook_id]);
    });

    it('list only their own instance', async () => {
      const r = await h.request('GET', '/instances', { key: key.key });
      assert.equal(r.status, 200);
      assert.deepEqual(pluck(r.body.instances, 'instance_id'), [own]);
    });

    it("are 403 forbidden on another instance's paths and on admin operations", async () => {
      const cases: [string, string, unknown?][] = [
        ['GET', `/instances/${other}`],
        ['GET', `/instances/${other}/webhooks`],
        ['POST', `/instances/${other}/webhooks`, HOOK],
        ['POST', '/instances', { name: 'x' }],
        ['POST', `/instances/${own}/keys`],
        ['GET', `/instances/${own}/keys`],
        ['DELETE', `/instances/${own}/keys/${key.key_id}`],
        ['DELETE', `/instances/${own}`],
        ['DELETE', `/instances/${other}`],
      ];
      for (const [method, path, body] of cases) {
        const r = await h.request(method, path, { key: key.key, body });
        assertError(r, 403, 'forbidden', undefined, `${method} ${path}`);
      }
      // Nothing was done on the way: both instances and the key are still there.
      const keys = await h.request('GET', `/instances/${own}/keys`);
      assert.deepEqual(pluck(keys.body.keys, 'key_id'), [key.key_id]);
      assert.equal((await h.request('GET', `/instances/${other}`)).status, 200);
    });

    it('are listed without their secret, and a revoked key is unknown', async () => {
      const second = await createKey(own);
      const list = await h.request('GET', `/instances/${own}/keys`);
      assert.equal(list.status, 200);
      assert.deepEqual(Object.keys(list.body).sort(), ['keys', 'success']);
      for (const k of list.body.keys) {
        assert.deepEqual(Object.keys(k).sort(), ['created_at', 'instance_id', 'key_id', 'scope']);
        assert.equal(k.instance_id, own);
        assert.match(k.created_at, ISO);
      }
      assert.ok(pluck(list.body.keys, 'key_id').includes(second.key_id));
      assert.ok(!JSON.stringify(list.body).includes(second.key));

      const del = await h.request('DELETE', `/instances/${own}/keys/${second.key_id}`);
      assert.deepEqual([del.status, del.body], [200, { success: true }]);
      assertError(await h.request('GET', `/instances/${own}`, { key: second.key }), 401, 'unauthorized');
      assertError(await h.request('DELETE', `/instances/${own}/keys/${second.key_id}`), 404, 'not_found');
      // The other key is untouched.
      assert.equal((await h.request('GET', `/instances/${own}`, { key: key.key })).status, 200);
    });
  });
});

describe('secrets at rest', () => {
  it('stores neither API keys nor signing secrets in clear', async () => {
    const id = await h.createInstance('at-rest');
    const { key } = await createKey(id);
    const first = `sign-secret-${crypto.randomUUID()}`;
    const second = `sign-secret-${crypto.randomUUID()}`;
    const wh = await h.createWebhook(id, { ...HOOK, client_sign_secret: first }, false);
    const sealed = async () =>
      storedValue('SELECT secret_sealed AS v FROM webhooks WHERE webhook_id = ?', wh);
    const patch = async (secret: string) => {
      const r = await h.request('PATCH', `/instances/${id}/webhooks/${wh}`, {
        body: { ...HOOK, client_sign_secret: secret },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.webhook.client_sign_secret_set, true);
    };
    const atCreate = await sealed();
    await patch(second);
    const atPatch = await sealed();
    await patch('');
    assert.equal(await sealed(), atPatch, 'an empty secret keeps the sealed value');
    assert.notEqual(atPatch, atCreate);
    for (const v of [atCreate, atPatch]) assert.match(String(v), /^v1\./);
    for (const secret of [ADMIN_KEY, key, first, second]) await assertNotStored(secret);
    const hash = createHash('sha256').update(key).digest('hex');
    assert.equal(await storedValue('SELECT count(*) AS v FROM api_keys WHERE key_hash = ?', hash), 1);
  });
});

describe('instances', () => {
  const INSTANCE_FIELDS = [
    'counts',
    'created_at',
    'engine_hmac_key_set',
    'engine_media_prefix',
    'instance_id',
    'name',
    'phone',
    'status',
  ];

  async function getInstance(id: string): Promise<any> {
    const r = await h.request('GET', `/instances/${id}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(Object.keys(r.body).sort(), ['instance', 'success']);
    assert.equal(r.body.success, true);
    assert.deepEqual(Object.keys(r.body.instance).sort(), INSTANCE_FIELDS);
    return r.body.instance;
  }

  for (const [what, options, name] of [
    ['without a body', {}, ''],
    ['with an empty object', { body: {} }, ''],
    ['with a name', { body: { name: 'Sales line' } }, 'Sales line'],
  ] as const) {
    it(`creates an instance ${what}`, async () => {
      const before = Date.now();
      const r = await h.request('POST', '/instances', options);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body).sort(), ['instance_id', 'success']);
      assert.equal(r.body.success, true);
      assert.match(r.body.instance_id, idOf('ins'));
      const got = await getInstance(r.body.instance_id);
      const { created_at, counts, ...rest } = got;
      assert.deepEqual(rest, {
        instance_id: r.body.instance_id,
        name,
        status: 'STOPPED',
        phone: null,
        engine_hmac_key_set: false,
        engine_media_prefix: null,
      });
      assert.deepEqual(counts, { webhooks: 0, failed_deliveries: 0, redeliverable_deliveries: 0 });
      assert.match(created_at, ISO);
      assert.ok(Date.parse(got.created_at) >= before - 1000 && Date.parse(got.created_at) <= Date.now());
      const list = await h.request('GET', '/instances');
      assert.deepEqual(Object.keys(list.body).sort(), ['instances', 'success']);
      assert.deepEqual(
        list.body.instances[pluck(list.body.instances, 'instance_id').indexOf(got.instance_id)],
        got,
      );
    });
  }

  it('refuses a create body with a bad or unknown field', async () => {
    for (const [body, message] of [
      [{ name: 42 }, /^name: must be a string$/],
      [{ name: 'x'.repeat(201) }, /^name: .*200/],
      [{ nmae: 'x' }, /^nmae: is not a known field$/],
    ] as const) {
      assertError(await h.request('POST', '/instances', { body }), 400, 'invalid_request', message);
    }
  });

  it('deletes an instance with its webhooks and keys', async () => {
    const id = await h.createInstance('doomed');
    const wh = await h.createWebhook(id, HOOK);
    const { key } = await createKey(id);
    const del = await h.request('DELETE', `/instances/${id}`);
    assert.deepEqual([del.status, del.body], [200, { success: true }]);
    assertError(await h.request('GET', `/instances/${id}`), 404, 'not_found', new RegExp(id));
    assertError(await h.request('DELETE', `/instances/${id}`), 404, 'not_found');
    assertError(await h.request('GET', `/instances/${id}/webhooks/${wh}`), 404, 'not_found');
    assertError(await h.request('GET', '/instances', { key }), 401, 'unauthorized');
    for (const table of ['webhooks', 'api_keys']) {
      assert.equal(
        await storedValue(`SELECT count(*) AS v FROM ${table} WHERE instance_id = ?`, id),
        0,
        table,
      );
    }
  });

  it('counts webhooks and failed deliveries, and promises exactly what bulk redelivery restarts', async () => {
    const id = await h.createInstance('counted');
    const refused = { ...HOOK, events: ['session.status'] }; // port 9: connection refused, so retries wait
    const on = await h.createWebhook(id, refused);
    const off = await h.createWebhook(id, refused);
    await h.createWebhook(id, refused, false);
    await h.publish(id, STATUS_EVENT);
    await eventually(async () => {
      const r = await h.request('GET', `/instances/${id}/deliveries`);
      return r.body.deliveries.every((d: any) => d.attempt_count >= 1) ? true : undefined;
    });
    for (const [webhook, enabled] of [
      [on, false],
      [off, false],
      [on, true],
    ] as const) {
      await h.request('POST', `/instances/${id}/webhooks/${webhook}/enabled`, { body: { enabled } });
    }
    const expected = { webhooks: 3, failed_deliveries: 2, redeliverable_deliveries: 1 };
    assert.deepEqual((await getInstance(id)).counts, expected);
    const listed = (await h.request('GET', '/instances')).body.instances.find(
      (i: any) => i.instance_id === id,
    );
    assert.deepEqual(listed.counts, expected);
    const bulk = await h.request('POST', `/instances/${id}/deliveries/redeliver`, { body: {} });
    assert.equal(bulk.body.redelivered, expected.redeliverable_deliveries);
  });

  /** Every instance-scoped path, with a body that passes validation so only the instance decides. */
  const scoped = (id: string): [string, string, unknown?][] => [
    ['GET', `/instances/${id}`],
    ['DELETE', `/instances/${id}`],
    ['POST', `/instances/${id}/keys`],
    ['GET', `/instances/${id}/keys`],
    ['DELETE', `/instances/${id}/keys/key_0000000000000000000000`],
    ['GET', `/instances/${id}/webhooks`],
    ['POST', `/instances/${id}/webhooks`, HOOK],
    ['GET', `/instances/${id}/webhooks/whk_0000000000000000000000`],
    ['PATCH', `/instances/${id}/webhooks/whk_0000000000000000000000`, HOOK],
    ['DELETE', `/instances/${id}/webhooks/whk_0000000000000000000000`],
    ['POST', `/instances/${id}/webhooks/whk_0000000000000000000000/enabled`, { enabled: true }],
    ['POST', `/instances/${id}/events`, STATUS_EVENT],
    ['POST', `/instances/${id}/events/batch`, { events: [STATUS_EVENT] }],
    ['GET', `/instances/${id}/deliveries`],
    ['GET', `/instances/${id}/deliveries/dlv_0000000000000000000000`],
    ['POST', `/instances/${id}/deliveries/dlv_0000000000000000000000/redeliver`],
    ['POST', `/instances/${id}/deliveries/redeliver`, {}],
  ];

  it('answers 404 not_found for an unknown instance on every instance-scoped path', async () => {
    const unknown = 'ins_0000000000zzzzzzzzzzzzzzzz';
    for (const [method, path, body] of scoped(unknown)) {
      const r = await h.request(method, path, { body });
      assertError(
        r,
        404,
        'not_found',
        new RegExp(`^instance ${unknown} does not exist$`),
        `${method} ${path}`,
      );
    }
  });

  it('answers 400 naming instance_id for a malformed instance id on every instance-scoped path', async () => {
    for (const bad of ['foo', 'whk_0000000000000000000000']) {
      for (const [method, path, body] of scoped(bad)) {
        const r = await h.request(method, path, { body });
        assertError(r, 400, 'invalid_request', /^instance_id: /, `${method} ${path}`);
      }
    }
  });
});
