/**
 * Engine media pulled into Herald's media store: a WAHA media object `{ url, mimetype, filename, error }` becomes
 * the seed's ready / too_large / failed / outgoing / unavailable object before the event's deliveries start,
 * with a real file server on 127.0.0.1 standing in for WAHA's.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { pngImage } from '../media/files.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 1500;

let h: TestHerald;
let files: EngineFiles;
before(async () => {
  files = await EngineFiles.start();
  h = await startTestHerald({
    MEDIA_MAX_BYTES: String(MAX_BYTES),
    DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    ENGINE_MEDIA_HEADERS: 'X-Api-Key: waha-secret; X-Trace: herald-test',
    ENGINE_MEDIA_PREFIXES: files.prefix,
  });
});
after(async () => {
  await files.close();
  await h.close();
});

async function hook(t: TestContext, ins: string, answer?: TestReceiver['answer']) {
  const r = await TestReceiver.start();
  if (answer) r.answer = answer;
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events: ['message', 'message.any'] });
  return r;
}

let n = 0;
/** An incoming image message as NOWEB sends it, its media on the engine's file server. */
function imageMessage(media: unknown, overrides: Record<string, unknown> = {}) {
  n++;
  return {
    id: `false_491701234567@c.us_3EB0${String(n).padStart(16, '0')}`,
    timestamp: 1763719200,
    from: '491701234567@c.us',
    fromMe: false,
    to: '15550001111@c.us',
    body: 'look at this',
    hasMedia: true,
    media,
    ...overrides,
  };
}

/** Posts the message and returns the media object its first delivery carried. */
async function delivered(t: TestContext, payload: Record<string, unknown>, event = 'message') {
  const ins = await h.createInstance();
  const r = await hook(t, ins);
  const res = await postWaha(h.url, ins, wahaBody(event, payload));
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const [got] = await r.waitFor(1);
  return got.body.payload.media as Record<string, any>;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const stored = () => readdirSync(join(h.dataDir, 'media', 'files'), { withFileTypes: true }).length;
const spooled = () => readdirSync(join(h.dataDir, 'media', 'tmp')).filter((f) => f.endsWith('.part'));

describe('engine media', () => {
  test('a url is downloaded with the engine headers; the delivery carries Herald’s signed link to the same bytes', async (t) => {
    const png = pngImage(48);
    const url = files.serve('img-ready.png', { bytes: png, type: 'image/png' });
    const media = await delivered(
      t,
      imageMessage({ url, mimetype: 'image/png', filename: null, error: null }),
    );
    assert.equal(media.status, 'ready');
    assert.equal(media.mimetype, 'image/png');
    assert.match(media.media_id, /^med_/);
    assert.match(media.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(media.url.startsWith(`${h.url}/media/${media.media_id}?expires=`), media.url);
    assert.equal(media.size, png.length);
    assert.equal(media.sha256, sha256(png));
    const [fetched] = files.requestsFor(url);
    assert.equal(fetched.headers['x-api-key'], 'waha-secret');
    assert.equal(fetched.headers['x-trace'], 'herald-test');
    const download = await fetch(media.url);
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), png, 'identical bytes behind the link');
  });

  test('a document keeps its filename; a missing mimetype comes from the answer', async (t) => {
    const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
    const url = files.serve('doc.pdf', { bytes: pdf, type: 'application/pdf' });
    const media = await delivered(t, imageMessage({ url, filename: 'invoice 1042.pdf' }));
    assert.equal(media.status, 'ready');
    assert.equal(media.mimetype, 'application/pdf');
    assert.equal(media.filename, 'invoice 1042.pdf');
  });

  test('larger than MEDIA_MAX_BYTES: too_large, the download stopped at the limit, nothing kept', async (t) => {
    const before = stored();
    const declared = files.serve('big-declared.mp4', {
      bytes: Buffer.alloc(MAX_BYTES + 1),
      type: 'video/mp4',
    });
    const endless = files.serve('big-endless.mp4', { endless: true, chunk: 16 * 1024 });
    for (const url of [declared, endless]) {
      const media = await delivered(t, imageMessage({ url, mimetype: 'video/mp4' }));
      assert.deepEqual(media, { status: 'too_large', mimetype: 'video/mp4' });
    }
    assert.equal(stored(), before, 'no file kept');
    await eventually(async () => (spooled().length === 0 ? true : undefined), 5000, 'no partial file left');
  });

  for (const [name, answer] of [
    ['a 404', { status: 404 }],
    ['a 500', { status: 500 }],
    ['no answer within the timeout', 'hang'],
  ] as const) {
    test(`${name} from the engine: failed`, async (t) => {
      const url = files.serve(`failing-${name.replace(/\W/g, '')}.jpg`, answer);
      const started = Date.now();
      const media = await delivered(t, imageMessage({ url, mimetype: 'image/jpeg' }));
      assert.deepEqual(media, { status: 'failed', mimetype: 'image/jpeg' });
      if (answer === 'hang') assert.ok(Date.now() - started >= TIMEOUT_MS, 'waited for the timeout');
    });
  }

  test('an engine error is failed, media null or a null url is unavailable, and nothing is requested', async (t) => {
    const before = files.requests.length;
    const error = await delivered(
      t,
      imageMessage({ url: null, mimetype: 'image/jpeg', error: { message: 'gone' } }),
    );
    assert.deepEqual(error, { status: 'failed', mimetype: 'image/jpeg' });
    assert.deepEqual(await delivered(t, imageMessage(null)), { status: 'unavailable' });
    assert.deepEqual(await delivered(t, imageMessage({ url: null, mimetype: 'image/jpeg' })), {
      status: 'unavailable',
    });
    assert.equal(files.requests.length, before);
  });

  test('media of a message the session sent is outgoing: no request, no url', async (t) => {
    const url = files.serve('sent.jpg', { bytes: pngImage(8), type: 'image/jpeg' });
    const sent = imageMessage({ url, mimetype: 'image/jpeg', filename: null }, { fromMe: true });
    const media = await delivered(t, sent, 'message.any');
    assert.deepEqual(media, { status: 'outgoing', mimetype: 'image/jpeg' });
    assert.equal(files.requestsFor(url).length, 0);
  });

  test('every webhook and every attempt get the same settled media object, and nothing leaves before it', async (t) => {
    const url = files.serve('slow.png', 'hang');
    const ins = await h.createInstance();
    const failingOnce = await hook(t, ins, (_req, i) => (i === 0 ? { status: 503 } : { status: 200 }));
    const fine = await hook(t, ins);
    const res = await postWaha(h.url, ins, wahaBody('message', imageMessage({ url, mimetype: 'image/png' })));
    assert.equal(res.body.deliveries, 2);
    const list = (await h.request('GET', `/instances/${ins}/deliveries`)).body.deliveries;
    assert.deepEqual(
      list.map((d: any) => [d.status, d.attempt_count]),
      [
        ['pending', 0],
        ['pending', 0],
      ],
    );
    assert.equal(fine.received.length + failingOnce.received.length, 0, 'held while the download runs');
    const [a, b] = [...(await failingOnce.waitFor(2, 15_000)), ...(await fine.waitFor(1))];
    assert.deepEqual(a.body.payload.media, { status: 'failed', mimetype: 'image/png' });
    assert.deepEqual(a.rawBody, b.rawBody, 'the retry sends the same bytes');
    assert.deepEqual(fine.received[0].body.payload.media, a.body.payload.media);
  });
});
