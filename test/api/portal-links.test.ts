/**
 * Portal links: a token in a URL's fragment that acts for one instance until it expires, is revoked, or the key that
 * made it is — its webhooks and delivery log only: no publishing, no instance change, no keys, no links of its own;
 * reads only when read-only — at most PORTAL_MAX_LINKS live ones per instance, and never in a log line. On either
 * store.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { startTestHerald, type TestHerald } from '../support/herald.ts';

let skew = 0;
const clock = () => Date.now() + skew;
let logs = '';
let h: TestHerald;
let mine: string;
let other: string;
before(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  h = await startTestHerald(
    { LOG_LEVEL: 'trace', PUBLIC_URL: 'https://herald.example.com/' },
    { clock, logger: pino({ level: 'trace' }, sink) },
  );
  mine = await h.createInstance('customer');
  other = await h.createInstance('someone else');
});
after(() => h.close());

/** A new link of `mine`, made with a key of that instance; its token from the URL's fragment. */
async function link(body: Record<string, unknown> = {}) {
  const key = await h.request('POST', `/instances/${mine}/keys`);
  const res = await h.request('POST', `/instances/${mine}/portal-links`, { body, key: key.body.key });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const url = new URL(res.body.url);
  assert.equal(`${url.origin}${url.pathname}`, 'https://herald.example.com/portal');
  assert.equal(url.search, '');
  return { ...res.body, token: url.hash.slice(1) as string };
}

const WEBHOOK = { destination_url: 'https://203.0.113.7/hook', events: ['message'] };

describe('portal links', () => {
  test('the token manages its own instance’s webhooks and log; it publishes nothing, changes no instance, no key, no link', async () => {
    const { token, link_id, expires_at } = await link();
    assert.match(token, /^hpl_[A-Za-z0-9_-]{32,}$/);
    assert.equal(Date.parse(expires_at) - clock() <= 3600_000, true);
    assert.ok(Date.parse(expires_at) - clock() > 3590_000, 'an hour by default');
    const as = (method: string, path: string, body?: unknown) =>
      h.request(method, path, { key: token, body });

    const listed = await as('GET', '/instances');
    assert.deepEqual(
      listed.body.instances.map((i: { instance_id: string }) => i.instance_id),
      [mine],
    );
    assert.equal((await as('GET', `/instances/${mine}`)).status, 200);
    assert.equal((await as('POST', `/instances/${mine}/webhooks`, WEBHOOK)).status, 201);
    assert.equal((await as('GET', `/instances/${mine}/deliveries`)).status, 200);
    const me = await as('GET', '/portal-link');
    assert.deepEqual(
      [me.body.link.link_id, me.body.link.instance_id, me.body.link.read_only],
      [link_id, mine, false],
    );

    const lacks = (what: string) =>
      `a portal link cannot ${what}: it manages its instance's webhooks and reads its delivery log`;
    const event = { event: 'message', payload: { id: 'false_1@c.us_A', fromMe: false } };
    for (const [method, path, body, message] of [
      ['GET', `/instances/${other}`, undefined, 'a portal link of another instance cannot act on this one'],
      [
        'GET',
        `/instances/${other}/webhooks`,
        undefined,
        'a portal link of another instance cannot act on this one',
      ],
      [
        'POST',
        `/instances/${other}/webhooks`,
        WEBHOOK,
        'a portal link of another instance cannot act on this one',
      ],
      [
        'GET',
        `/instances/${mine}/keys`,
        undefined,
        'a portal link cannot manage instance keys: this needs the admin key',
      ],
      [
        'POST',
        `/instances/${mine}/keys`,
        {},
        'a portal link cannot manage instance keys: this needs the admin key',
      ],
      [
        'DELETE',
        `/instances/${mine}`,
        undefined,
        'a portal link cannot create or delete instances: this needs the admin key',
      ],
      ['POST', `/instances/${mine}/portal-links`, {}, lacks('manage portal links')],
      ['GET', `/instances/${mine}/portal-links`, undefined, lacks('manage portal links')],
      ['PATCH', `/instances/${mine}`, { name: 'renamed' }, lacks('change the instance')],
      ['PATCH', `/instances/${mine}`, { engine_hmac_key: 'the-attackers-own' }, lacks('change the instance')],
      ['POST', `/instances/${mine}/events`, event, lacks('publish events')],
      ['POST', `/instances/${mine}/events/batch`, { events: [event] }, lacks('publish events')],
      [
        'POST',
        `/instances/${mine}/engine/waha`,
        { event: 'message', payload: event.payload },
        lacks('publish events'),
      ],
    ] as const) {
      const res = await as(method, path, body);
      assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(
        [res.body.error.code, res.body.error.message],
        ['forbidden', message],
        `${method} ${path}`,
      );
    }
    const upload = await h.request('POST', `/instances/${mine}/media`, {
      key: token,
      rawBody: new Uint8Array(16),
      contentType: 'image/png',
    });
    assert.deepEqual([upload.status, upload.body.error?.message], [403, lacks('publish events')]);
    // Nothing of it happened: the instance keeps its name and has no engine key, and no event was stored.
    const instance = (await h.request('GET', `/instances/${mine}`)).body.instance;
    assert.deepEqual([instance.name, instance.engine_hmac_key_set], ['customer', false]);
    const log = await h.request('GET', `/instances/${mine}/deliveries`);
    assert.deepEqual(log.body.deliveries, []);
    assert.equal((await h.request('GET', `/instances/${mine}`)).status, 200, 'the instance is still there');
  });

  test('a read-only link reads its webhooks and log, and every write is a 403 naming the link as read-only', async () => {
    const { token } = await link({ read_only: true });
    const as = (method: string, path: string, body?: unknown) =>
      h.request(method, path, { key: token, body });
    const hook = await h.createWebhook(mine, WEBHOOK, false);
    for (const path of [
      `/instances/${mine}`,
      `/instances/${mine}/webhooks`,
      `/instances/${mine}/webhooks/${hook}`,
      `/instances/${mine}/deliveries`,
      '/instances',
      '/portal-link',
    ]) {
      assert.equal((await as('GET', path)).status, 200, path);
    }
    assert.equal((await as('GET', '/portal-link')).body.link.read_only, true);
    for (const [method, path, body] of [
      ['POST', `/instances/${mine}/webhooks`, WEBHOOK],
      ['PATCH', `/instances/${mine}/webhooks/${hook}`, WEBHOOK],
      ['POST', `/instances/${mine}/webhooks/${hook}/enabled`, { enabled: false }],
      ['POST', `/instances/${mine}/webhooks/${hook}/rotate-secret`, {}],
      ['POST', `/instances/${mine}/webhooks/${hook}/test`, { event: 'message' }],
      ['DELETE', `/instances/${mine}/webhooks/${hook}`, undefined],
      ['PATCH', `/instances/${mine}`, { name: 'x' }],
      ['POST', `/instances/${mine}/events`, WEBHOOK],
      ['POST', `/instances/${mine}/deliveries/redeliver`, {}],
    ] as const) {
      const res = await as(method, path, body);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.match(
        res.body.error.message,
        /^a read-only portal link cannot .*: it is read-only and may only read$/,
      );
    }
    assert.equal((await h.request('GET', `/instances/${mine}/webhooks/${hook}`)).status, 200, 'still there');
  });

  test('an expired link is a 401 saying so; a revoked one a 401 at its next use; neither is listed', async () => {
    const expiring = await link({ ttl_s: 60 });
    const revoked = await link({ ttl_s: 600 });
    const list = async () =>
      (await h.request('GET', `/instances/${mine}/portal-links`)).body.links.map(
        (l: { link_id: string }) => l.link_id,
      );
    assert.ok((await list()).includes(expiring.link_id));
    const listed = (await h.request('GET', `/instances/${mine}/portal-links`)).body.links[0];
    assert.deepEqual(Object.keys(listed).sort(), [
      'created_at',
      'expires_at',
      'instance_id',
      'link_id',
      'read_only',
    ]);

    assert.equal(
      (await h.request('DELETE', `/instances/${mine}/portal-links/${revoked.link_id}`)).status,
      200,
    );
    const refused = await h.request('GET', `/instances/${mine}`, { key: revoked.token });
    assert.deepEqual([refused.status, refused.body.error.message], [401, 'unknown or revoked portal link']);
    assert.equal(
      (await h.request('DELETE', `/instances/${mine}/portal-links/${revoked.link_id}`)).status,
      404,
    );

    skew += 61_000;
    try {
      const late = await h.request('GET', `/instances/${mine}`, { key: expiring.token });
      assert.deepEqual([late.status, late.body.error.message], [401, 'this portal link has expired']);
      assert.equal((await list()).includes(expiring.link_id), false);
    } finally {
      skew -= 61_000;
    }
  });

  test('a link dies with the key that made it; one the admin made lives on', async () => {
    const key = await h.request('POST', `/instances/${mine}/keys`);
    const made = async (credential?: string) => {
      const res = await h.request('POST', `/instances/${mine}/portal-links`, { body: {}, key: credential });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return { link_id: res.body.link_id as string, token: new URL(res.body.url).hash.slice(1) };
    };
    const byKey = await made(key.body.key);
    const alsoByKey = await made(key.body.key);
    const byAdmin = await made();
    for (const l of [byKey, alsoByKey, byAdmin])
      assert.equal((await h.request('GET', `/instances/${mine}`, { key: l.token })).status, 200);

    const revoked = await h.request('DELETE', `/instances/${mine}/keys/${key.body.key_id}`);
    assert.equal(revoked.status, 200);
    for (const l of [byKey, alsoByKey]) {
      const refused = await h.request('GET', `/instances/${mine}/webhooks`, { key: l.token });
      assert.deepEqual([refused.status, refused.body.error.message], [401, 'unknown or revoked portal link']);
    }
    assert.equal((await h.request('GET', `/instances/${mine}`, { key: byAdmin.token })).status, 200);
    const listed = (await h.request('GET', `/instances/${mine}/portal-links`)).body.links.map(
      (l: { link_id: string }) => l.link_id,
    );
    assert.ok(listed.includes(byAdmin.link_id));
    assert.equal(listed.includes(byKey.link_id) || listed.includes(alsoByKey.link_id), false);
  });

  test('ttl_s and read_only are checked: a 400 names the field and the rule', async () => {
    for (const [body, field] of [
      [{ ttl_s: 59 }, 'ttl_s'],
      [{ ttl_s: 86_401 }, 'ttl_s'],
      [{ ttl_s: 'long' }, 'ttl_s'],
      [{ read_only: 'yes' }, 'read_only'],
      [{ scope: 'all' }, 'scope'],
    ] as const) {
      const res = await h.request('POST', `/instances/${mine}/portal-links`, { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.error.details[0].field, field, JSON.stringify(res.body));
    }
  });

  test('no token reaches a log line, at any level', async () => {
    const { token } = await link();
    await h.request('GET', `/instances/${mine}/webhooks`, { key: token });
    await h.request('POST', `/instances/${mine}/webhooks`, { key: token, body: { destination_url: 'bad' } });
    await h.request('GET', `/instances/${other}`, { key: token });
    assert.ok(logs.length > 0, 'something was logged');
    assert.equal(logs.includes(token), false);
    assert.equal(logs.includes(token.slice(4, 20)), false, 'nor a part of it');
  });
});

describe('the portal page', () => {
  test('is framed by no one unless PORTAL_FRAME_ANCESTORS names origins; the rest of the UI never', async () => {
    const framed = await startTestHerald({
      PORTAL_FRAME_ANCESTORS: 'https://app.example.com http://embed.test:8081',
      PORTAL_TITLE: 'Acme <Webhooks>',
      PORTAL_ACCENT: '#0A7C59',
    });
    try {
      const page = await fetch(`${framed.url}/portal`);
      assert.equal(page.status, 200);
      assert.match(
        page.headers.get('content-security-policy') ?? '',
        /frame-ancestors https:\/\/app\.example\.com http:\/\/embed\.test:8081(;|$)/,
      );
      const html = await page.text();
      assert.match(html, /name="herald-portal-title" content="Acme &#60;Webhooks&#62;"/);
      assert.match(html, /name="herald-portal-accent" content="#0a7c59"/);
      for (const path of ['/', `/ui/instances/${mine}`]) {
        const csp = (await fetch(`${framed.url}${path}`)).headers.get('content-security-policy');
        assert.match(csp ?? '', /frame-ancestors 'none'/, path);
      }
    } finally {
      await framed.close();
    }
    const plain = await fetch(`${h.url}/portal`);
    assert.match(plain.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
  });
});

describe('the cap on live portal links per instance', () => {
  let capped: TestHerald;
  let now = 1_800_000_000_000;
  before(async () => {
    capped = await startTestHerald({ PORTAL_MAX_LINKS: '3' }, { clock: () => now });
  });
  after(() => capped.close());

  test('beyond PORTAL_MAX_LINKS live links a 409 says the limit and how to free one; revoked and expired ones free it', async () => {
    const [ins, elsewhere] = [await capped.createInstance('capped'), await capped.createInstance('other')];
    const make = (ttl_s: number, instance = ins) =>
      capped.request('POST', `/instances/${instance}/portal-links`, { body: { ttl_s } });
    const first = await make(60);
    assert.equal(first.status, 201);
    assert.equal((await make(3600)).status, 201);
    assert.equal((await make(3600)).status, 201);
    const refused = await make(3600);
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body.error, {
      code: 'conflict',
      message:
        'portal links: an instance may have at most 3 live links (PORTAL_MAX_LINKS); revoke one ' +
        '(DELETE /instances/{instance_id}/portal-links/{link_id}) or wait for one to expire',
      details: [],
    });
    assert.equal((await make(3600, elsewhere)).status, 201, 'another instance has its own count');
    assert.equal((await capped.request('GET', `/instances/${ins}/portal-links`)).body.links.length, 3);

    // The first expires: its place is free.
    now += 61_000;
    assert.equal((await make(3600)).status, 201);
    assert.equal((await make(3600)).status, 409);
    // A revoked one frees its place at once.
    const links = (await capped.request('GET', `/instances/${ins}/portal-links`)).body.links;
    const revoked = await capped.request('DELETE', `/instances/${ins}/portal-links/${links[0].link_id}`);
    assert.equal(revoked.status, 200);
    assert.equal((await make(3600)).status, 201);
  });

  test('creates at once never pass the cap', async () => {
    const ins = await capped.createInstance('race');
    const replies = await Promise.all(
      Array.from({ length: 12 }, () =>
        capped.request('POST', `/instances/${ins}/portal-links`, { body: { ttl_s: 3600 } }),
      ),
    );
    assert.equal(replies.filter((r) => r.status === 201).length, 3);
    assert.equal(replies.filter((r) => r.status === 409).length, 9);
    assert.equal((await capped.request('GET', `/instances/${ins}/portal-links`)).body.links.length, 3);
  });
});
