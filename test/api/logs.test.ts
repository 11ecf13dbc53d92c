/**
 * The log: keys and signing secrets never appear in it, even at the most verbose level (SPEC §3); one line per
 * request at info, health probes and the session page's refreshes only at debug; signed media links and other
 * credentials in URLs are redacted.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { redactUrl } from '../../src/api/redact-url.ts';
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

test('a signed media link is logged without its signature', async () => {
  const log = capture('info');
  const h = await startTestHerald({}, { logger: log.logger });
  try {
    const ins = await h.createInstance();
    const upload = await h.request('POST', `/instances/${ins}/media`, {
      rawBody: new Uint8Array([137, 80, 78, 71]),
      contentType: 'image/png',
    });
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    // The link a receiver gets, as Herald delivered it.
    const link = await mediaLink(h, ins, upload.body.media_id);
    const got = await fetch(link);
    assert.equal(got.status, 200);
    await got.arrayBuffer();
    const sig = new URL(link).searchParams.get('sig') ?? '';
    assert.ok(sig.length > 10);
    await h.close();
    const line = log.lines.find((l) => typeof l.url === 'string' && l.url.startsWith('/media/'));
    assert.ok(line, 'the download is logged');
    assert.equal(line.url, `/media/${upload.body.media_id}?expires=…&sig=…`);
    assert.ok(!log.text().includes(sig), 'the signature is nowhere in the log');
  } finally {
    await h.close().catch(() => {});
  }
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

test('redactUrl keeps the path and hides credentials in the query and the user information', () => {
  assert.equal(redactUrl('/media/med_1?expires=1795341600&sig=abc'), '/media/med_1?expires=…&sig=…');
  assert.equal(redactUrl('/instances?limit=5'), '/instances?limit=5');
  assert.equal(
    redactUrl('https://user:pw@hooks.example.com/in?token=t0k&x=1'),
    'https://…@hooks.example.com/in?token=…&x=1',
  );
  assert.equal(
    redactUrl('https://h.example/a?api_key=k&Signature=s'),
    'https://h.example/a?api_key=…&Signature=…',
  );
  assert.equal(redactUrl('/plain/path'), '/plain/path');
});
