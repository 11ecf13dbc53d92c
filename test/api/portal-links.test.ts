/**
 * Portal links: a token in a URL's fragment that acts as a key of one instance until it expires or is revoked —
 * its own instance only, no keys, no instance delete, no links of its own; reads only when read-only — and that never
 * reaches a log line. On either store.
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
  test('the token acts on its own instance like an instance key, minus keys, instance delete and links', async () => {
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

    for (const [method, path, code] of [
      ['GET', `/instances/${other}`, 'forbidden'],
      ['GET', `/instances/${other}/webhooks`, 'forbidden'],
      ['POST', `/instances/${other}/webhooks`, 'forbidden'],
      ['GET', `/instances/${mine}/keys`, 'forbidden'],
      ['POST', `/instances/${mine}/keys`, 'forbidden'],
      ['DELETE', `/instances/${mine}`, 'forbidden'],
      ['POST', `/instances/${mine}/portal-links`, 'forbidden'],
      ['GET', `/instances/${mine}/portal-links`, 'forbidden'],
    ] as const) {
      const res = await as(method, path, method === 'POST' ? WEBHOOK : undefined);
      assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, code);
    }
    assert.equal((await h.request('GET', `/instances/${mine}`)).status, 200, 'the instance is still there');
  });

  test('a read-only link reads, and every write is a 403 naming the link as read-only', async () => {
    const { token } = await link({ read_only: true });
    const as = (method: string, path: string, body?: unknown) =>
      h.request(method, path, { key: token, body });
    assert.equal((await as('GET', `/instances/${mine}/webhooks`)).status, 200);
    assert.equal((await as('GET', '/portal-link')).body.link.read_only, true);
    for (const [method, path] of [
      ['POST', `/instances/${mine}/webhooks`],
      ['PATCH', `/instances/${mine}`],
      ['POST', `/instances/${mine}/events`],
      ['POST', `/instances/${mine}/deliveries/redeliver`],
    ] as const) {
      const res = await as(method, path, method === 'PATCH' ? { name: 'x' } : WEBHOOK);
      assert.equal(res.status, 403, `${method} ${path}`);
      assert.match(res.body.error.message, /portal link is read-only/);
    }
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
