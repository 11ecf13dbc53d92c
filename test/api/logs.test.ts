/**
 * The log: keys and signing secrets never appear in it, even at the most verbose level, wherever a request carries
 * them (query, path, headers); one line per request at info, health probes and the session page's successful reads
 * only at debug; signed media links and other credentials in URLs are redacted.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { hashKey } from '../../src/api/auth.ts';
import { installRequestLog, requestLogController } from '../../src/api/request-log.ts';
import { redactHeaders } from '../../src/domain/redact-headers.ts';
import { redactForeignUrl, redactUrl } from '../../src/domain/redact-url.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, messagePayload, startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

function capture(level: string) {
  const lines: any[] = [];
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level }, sink), lines, text: () => text };
}

test('no key or secret reaches the logs', async () => {
  const log = capture('trace');
  const h = await startTestHerald({ LOG_LEVEL: 'trace' }, { logger: log.logger });
  const receiver = await TestReceiver.start();
  receiver.answer = (_req, n) => (n === 0 ? { status: 500 } : { status: 200 });
  try {
    const ins = await h.createInstance();
    const { key } = (await h.request('POST', `/instances/${ins}/keys`)).body;
    const secret = 'whsec_never_in_a_log_line';
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'], client_sign_secret: secret });
    await h.request('GET', `/instances/${ins}/webhooks`, { key });
    await h.request('GET', '/instances', { key: `${key}x` });
    await h.request('POST', '/instances', { key });
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
    await receiver.waitFor(2);
    assert.ok(log.text().length > 0, 'the logger was used');
    for (const s of [ADMIN_KEY, key, `${key}x`, secret])
      assert.ok(!log.text().includes(s), `${s.slice(0, 8)}… in the logs`);
  } finally {
    await receiver.close();
    await h.close();
  }
});

test('one line per request at info; probes, page files and the page’s successful reads only at debug', async () => {
  for (const level of ['info', 'debug']) {
    const log = capture(level);
    const h = await startTestHerald({ LOG_LEVEL: level }, { logger: log.logger });
    try {
      const ins = await h.createInstance();
      const poll = { 'x-herald-poll': '1' };
      await h.request('GET', '/healthz', { key: null });
      await h.request('GET', '/readyz', { key: null });
      await fetch(`${h.url}/src/ui/assets/main.ts`);
      await h.request('GET', `/instances/${ins}/webhooks`, { headers: poll });
      await h.request('GET', '/instances/nope');
      // Marked as a poll, yet a change or a failure: each at info as usual.
      await h.request('POST', '/instances', { headers: poll, body: { name: 'polled' } });
      await h.request('GET', '/instances/nope', { headers: poll });
      await h.request('GET', `/instances/${ins}`, { headers: poll, key: 'hk_wrong_key_0000000000' });
      await h.request('DELETE', `/instances/${ins}`, { headers: poll });
      await h.close();
      const requests = log.lines.filter((l) => l.url !== undefined && l.method !== undefined);
      const at = (lvl: number) =>
        requests.filter((l) => l.level === lvl).map((l) => `${l.method} ${l.url} ${l.status}`);
      // Every answer is one line naming method, path, status and time; nothing else speaks of requests.
      assert.equal(
        log.lines.filter((l) => /incoming request|request completed/.test(l.msg)).length,
        0,
        'no two-line request logging',
      );
      assert.deepEqual(at(30), [
        'POST /instances 201',
        'GET /instances/nope 400',
        'POST /instances 201',
        'GET /instances/nope 400',
        `GET /instances/${ins} 401`,
        `DELETE /instances/${ins} 200`,
      ]);
      const bad = requests.find((l) => l.url === '/instances/nope');
      assert.equal(typeof bad.ms, 'number');
      assert.equal(bad.msg, `GET /instances/nope 400 ${bad.ms} ms`);
      const quiet = [
        'GET /healthz 200',
        'GET /readyz 200',
        'GET /src/ui/assets/main.ts 200',
        `GET /instances/${ins}/webhooks 200`,
      ];
      assert.deepEqual(at(20), level === 'debug' ? quiet : []);
    } finally {
      await h.close().catch(() => {});
    }
  }
});

test('Herald’s own credentials never reach the log, wherever a request carries them', async () => {
  const log = capture('trace');
  const h = await startTestHerald({ LOG_LEVEL: 'trace' }, { logger: log.logger });
  try {
    const ins = await h.createInstance();
    const { key } = (await h.request('POST', `/instances/${ins}/keys`)).body;
    const link = await h.request('POST', `/instances/${ins}/portal-links`, { body: {} });
    assert.equal(link.status, 201, JSON.stringify(link.body));
    const portal = new URL(link.body.url).hash.slice(1);
    const whsec = 'whsec_c2VjcmV0LW9mLWEtd2ViaG9vay1yZWNlaXZlcg==';
    const secrets = [ADMIN_KEY, key, portal, whsec, 'hk_made_up_0000000000000000'];
    const asked = [
      // In the query, under any name, alone or inside a longer value, plain or percent-encoded.
      `/instances?token=${key}`,
      `/instances?x=${portal}`,
      `/instances?limit=5&q=${encodeURIComponent(`Bearer ${ADMIN_KEY}`)}`,
      `/instances?s=${encodeURIComponent(whsec)}&limit=5`,
      `/instances?${key}`,
      `/instances?x=${ADMIN_KEY}`,
      // In the path.
      `/instances/${key}`,
      `/instances/${ins}/keys/${encodeURIComponent(portal)}`,
      `/${ADMIN_KEY}`,
      '/instances/hk_made_up_0000000000000000/webhooks',
    ];
    for (const path of asked) await h.request('GET', path);
    // In headers: the bearer (good and bad), and tokens in headers of the client's own choosing.
    for (const [name, value] of [
      ['x-api-key', key],
      ['cookie', `session=${portal}`],
      ['x-signing', whsec],
      ['x-admin', ADMIN_KEY],
    ])
      await h.request('GET', '/instances', { headers: { [name]: value } });
    await h.request('GET', '/instances', { key });
    await h.request('GET', '/instances', { key: portal });
    await h.request('GET', '/instances', { key: 'hk_made_up_0000000000000000' });
    await h.close();
    for (const s of secrets) assert.ok(!log.text().includes(s), `${s.slice(0, 10)}… is in the log`);
    const urls = log.lines.filter((l) => l.method === 'GET' && l.url !== undefined).map((l) => l.url);
    // What was asked is still there, with … in place of each credential.
    for (const expected of [
      '/instances?token=…',
      '/instances?x=…',
      '/instances?limit=5&q=…',
      '/instances?s=…&limit=5',
      '/instances?…=',
      '/instances/…',
      `/instances/${ins}/keys/…`,
      '/…',
      '/instances/…/webhooks',
    ])
      assert.ok(urls.includes(expected), `${expected} among ${urls.join(' ')}`);
  } finally {
    await h.close().catch(() => {});
  }
});

test('a signed media link is logged without its signature, at info and at debug', async () => {
  for (const level of ['info', 'debug']) {
    const log = capture(level);
    const h = await startTestHerald({ LOG_LEVEL: level }, { logger: log.logger });
    try {
      const ins = await h.createInstance();
      const upload = await h.request('POST', `/instances/${ins}/media`, {
        rawBody: new Uint8Array([137, 80, 78, 71]),
        contentType: 'image/png',
      });
      assert.equal(upload.status, 201, JSON.stringify(upload.body));
      // The link a receiver gets, as Herald delivered it: fetched whole, in part, and with a signature gone wrong.
      const link = await mediaLink(h, ins, upload.body.media_id);
      const sig = new URL(link).searchParams.get('sig') ?? '';
      assert.ok(sig.length > 10);
      const got = await fetch(link);
      assert.equal(got.status, 200);
      await got.arrayBuffer();
      await (await fetch(link, { headers: { range: 'bytes=0-1' } })).arrayBuffer();
      const forged = await fetch(link.replace('sig=', 'sig=x'));
      assert.equal(forged.status, 403);
      await forged.arrayBuffer();
      // A key an API client put in a query by mistake, under a name of its own.
      await h.request('GET', `/instances?limit=5&x-api-key=${sig}`);
      await h.close();
      const lines = log.lines.filter((l) => typeof l.url === 'string' && l.url.startsWith('/media/'));
      assert.equal(lines.length, 3, 'every download is logged');
      for (const line of lines) assert.equal(line.url, `/media/${upload.body.media_id}?expires=…&sig=…`);
      assert.ok(
        log.lines.some((l) => l.url === '/instances?limit=5&x-api-key=…'),
        'the query is redacted, its other parameters kept',
      );
      assert.ok(!log.text().includes(sig), `the signature is nowhere in the ${level} log`);
    } finally {
      await h.close().catch(() => {});
    }
  }
});

test("an engine's media link is logged without its user information or its query", async (t) => {
  const log = capture('info');
  const files = await EngineFiles.start();
  const h = await startTestHerald(
    { ENGINE_MEDIA_HEADERS: 'X-Api-Key: header-secret', ENGINE_MEDIA_PREFIXES: `${files.base}/api/files/` },
    { logger: log.logger },
  );
  t.after(async () => {
    await files.close();
    await h.close();
  });
  const ins = await h.createInstance();
  const receiver = await TestReceiver.start();
  t.after(() => receiver.close());
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
  // The download fails, so the line that names the link is written.
  const url = new URL(files.serve('refused.png', { status: 500 }));
  url.username = 'engine-user';
  url.password = 'engine-pass';
  url.search = '?token=engine-token&x-api-key=engine-query-key';
  const res = await postWaha(
    h.url,
    ins,
    wahaBody('message', {
      id: 'false_491701234567@c.us_3EB0AAAA',
      timestamp: 1763719200,
      from: '491701234567@c.us',
      fromMe: false,
      body: 'look',
      hasMedia: true,
      media: { url: url.toString(), mimetype: 'image/png', filename: null, error: null },
    }),
  );
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const [got] = await receiver.waitFor(1);
  assert.equal(got.body.payload.media.status, 'failed');
  // Refused before any request, for its user information; the line still names the link.
  const line = log.lines.find((l) => l.msg?.startsWith('engine media not stored: '));
  assert.ok(line, 'the failed download is logged');
  assert.equal(line.url, `http://…@${url.host}/api/files/refused.png?token=…&x-api-key=…`);
  for (const s of ['engine-user', 'engine-pass', 'engine-token', 'engine-query-key', 'header-secret'])
    assert.ok(!log.text().includes(s), `${s} in the log`);
});

/** A signed link to `mediaId`, made by publishing it to a webhook and reading the delivered body. */
async function mediaLink(h: Awaited<ReturnType<typeof startTestHerald>>, ins: string, mediaId: string) {
  const receiver = await TestReceiver.start();
  try {
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
    await h.publish(ins, {
      event: 'message',
      payload: messagePayload({ hasMedia: true, media: { media_id: mediaId } }),
    });
    await receiver.waitFor(1);
    return receiver.received[0].body.payload.media.url as string;
  } finally {
    await receiver.close();
  }
}

test('any line a request logs has its url and headers fields redacted, not only the request line', async (t) => {
  const log = capture('info');
  const app = Fastify({
    loggerInstance: log.logger as FastifyBaseLogger,
    logController: requestLogController(),
  });
  installRequestLog(app, hashKey(ADMIN_KEY));
  // A route that logs what it was sent, as a handler might when it reports a problem.
  app.get('/echo/*', async (request) => {
    request.log.warn({ url: request.url, headers: request.headers }, 'what the client sent');
    return {};
  });
  t.after(() => app.close());
  await app.inject({
    method: 'GET',
    url: '/echo/hk_path_secret_000000?q=hpl_query_secret_0000',
    headers: {
      authorization: `Bearer ${ADMIN_KEY}`,
      'x-api-key': 'hk_header_secret_00000',
      'x-keep': 'plain',
    },
  });
  const line = log.lines.find((l) => l.msg === 'what the client sent');
  assert.equal(line.url, '/echo/…?q=…');
  assert.deepEqual(
    [line.headers.authorization, line.headers['x-api-key'], line.headers['x-keep']],
    ['…', '…', 'plain'],
  );
  for (const s of [ADMIN_KEY, 'hk_path_secret', 'hpl_query_secret', 'hk_header_secret'])
    assert.ok(!log.text().includes(s), `${s} in the log`);
});

test('redactHeaders hides what a client authenticates with, and any value holding a Herald credential', () => {
  const isAdmin = (s: string) => s === 'the-admin-key-0123456789';
  assert.deepEqual(
    redactHeaders(
      {
        authorization: 'Basic dXNlcjpwYXNz',
        'Proxy-Authorization': 'x',
        cookie: 'a=b',
        'x-api-key': 'hk_abc',
        'x-note': 'sent with hpl_abc inside',
        'x-other': 'whsec_abc',
        'x-admin': 'Bearer the-admin-key-0123456789',
        'user-agent': 'curl/8',
        'x-webhook-id': 'whk_01HXYZ',
        accept: ['a', 'b'],
      },
      isAdmin,
    ),
    {
      authorization: '…',
      'Proxy-Authorization': '…',
      cookie: '…',
      'x-api-key': '…',
      'x-note': '…',
      'x-other': '…',
      'x-admin': '…',
      'user-agent': 'curl/8',
      'x-webhook-id': 'whk_01HXYZ',
      accept: ['a', 'b'],
    },
  );
});

test('redactUrl keeps the path and hides credentials in the query; redactForeignUrl hides every query value', () => {
  assert.equal(redactUrl('/media/med_1?expires=1795341600&sig=abc'), '/media/med_1?expires=…&sig=…');
  assert.equal(redactUrl('/instances?limit=5'), '/instances?limit=5');
  assert.equal(redactUrl('/instances/ins_1/events'), '/instances/ins_1/events');
  assert.equal(redactUrl('//user:secret@example.com/x'), '/x');
  assert.equal(
    redactUrl('/instances?limit=5&x-api-key=k&Signature=s&access_token=t&passwd=p'),
    '/instances?limit=5&x-api-key=…&Signature=…&access_token=…&passwd=…',
  );
  assert.equal(redactUrl('/plain/path'), '/plain/path');
  // Herald's credentials, whatever the parameter is called, and in the path; ids with a prefix ending in hk_ stay.
  assert.equal(redactUrl('/instances?x=hk_abc&limit=5'), '/instances?x=…&limit=5');
  assert.equal(redactUrl('/a/hpl_abc/b?y=Bearer%20whsec_x'), '/a/…/b?y=…');
  assert.equal(redactUrl('/instances/ins_1/webhooks/whk_1'), '/instances/ins_1/webhooks/whk_1');
  const isAdmin = (s: string) => s === 'the-admin-key-0123456789';
  assert.equal(
    redactUrl('/x/the-admin-key-0123456789?k=the-admin-key-0123456789&n=1', isAdmin),
    '/x/…?k=…&n=1',
  );
  assert.equal(
    redactForeignUrl('https://hooks.example.com/in/hk_abc?x=1'),
    'https://hooks.example.com/in/…?x=…',
  );
  assert.equal(
    redactForeignUrl('https://user:pw@files.example.com/f.png?token=t0k&x=1'),
    'https://…@files.example.com/f.png?token=…&x=…',
  );
  assert.equal(redactForeignUrl('https://tok@files.example.com/f'), 'https://…@files.example.com/f');
  assert.equal(redactForeignUrl('https://files.example.com/f'), 'https://files.example.com/f');
});
