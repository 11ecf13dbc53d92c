/**
 * The log: keys and signing secrets never appear in it, even at the most verbose level (SPEC §3); one line per
 * request at info, health probes and the session page's refreshes only at debug; signed media links and other
 * credentials in URLs are redacted.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
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

test('one line per request at info; probes, page files and the page refresh only at debug', async () => {
  for (const level of ['info', 'debug']) {
    const log = capture(level);
    const h = await startTestHerald({ LOG_LEVEL: level }, { logger: log.logger });
    try {
      const ins = await h.createInstance();
      await h.request('GET', '/healthz', { key: null });
      await h.request('GET', '/readyz', { key: null });
      await fetch(`${h.url}/src/ui/assets/main.ts`);
      await fetch(`${h.url}/instances/${ins}/webhooks`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-herald-poll': '1' },
      });
      await h.request('GET', '/instances/nope');
      await h.close();
      const requests = log.lines.filter((l) => l.url !== undefined);
      const at = (lvl: number) => requests.filter((l) => l.level === lvl).map((l) => `${l.method} ${l.url}`);
      // Every answer is one line naming method, path, status and time; nothing else speaks of requests.
      assert.equal(
        log.lines.filter((l) => /incoming request|request completed/.test(l.msg)).length,
        0,
        'no two-line request logging',
      );
      assert.deepEqual(at(30), ['POST /instances', 'GET /instances/nope']);
      const bad = requests.find((l) => l.url === '/instances/nope');
      assert.equal(bad.status, 400);
      assert.equal(typeof bad.ms, 'number');
      assert.equal(bad.msg, `GET /instances/nope 400 ${bad.ms} ms`);
      const quiet = [
        'GET /healthz',
        'GET /readyz',
        'GET /src/ui/assets/main.ts',
        `GET /instances/${ins}/webhooks`,
      ];
      assert.deepEqual(at(20), level === 'debug' ? quiet : []);
    } finally {
      await h.close().catch(() => {});
    }
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
  const h = await startTestHerald(
    { ENGINE_MEDIA_HEADERS: 'X-Api-Key: header-secret' },
    { logger: log.logger },
  );
  const files = await EngineFiles.start();
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
  assert.equal(
    redactForeignUrl('https://user:pw@files.example.com/f.png?token=t0k&x=1'),
    'https://…@files.example.com/f.png?token=…&x=…',
  );
  assert.equal(redactForeignUrl('https://tok@files.example.com/f'), 'https://…@files.example.com/f');
  assert.equal(redactForeignUrl('https://files.example.com/f'), 'https://files.example.com/f');
});
