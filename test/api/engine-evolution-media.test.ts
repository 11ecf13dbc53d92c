/**
 * Media from Evolution API: the file it sends inline (`webhook.base64`) is stored by Herald and served byte for byte
 * through Herald's own link; its S3 copy (`mediaUrl`) is downloaded as engine media (ENGINE_MEDIA_PREFIXES decides
 * where ENGINE_MEDIA_HEADERS may go, and where nothing is fetched at all); the message and message.any of one body
 * share one media object, one file, one download. Real file servers on 127.0.0.1 stand in for Evolution's S3 and for
 * a customer's host.
 */
import assert from 'node:assert/strict';
import { after, before, type TestContext, test } from 'node:test';
import { evolutionBody } from '../fixtures/evolution-events.ts';
import { pngImage, sha256 } from '../media/files.ts';
import { EngineFiles } from '../support/engine.ts';
import { postEvolution } from '../support/evolution-sender.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;
const S3_KEY = 'minio-read-key-19af';
const MAX = 64 * 1024;

let h: TestHerald;
let s3: EngineFiles;
let customer: EngineFiles;
before(async () => {
  s3 = await EngineFiles.start();
  customer = await EngineFiles.start();
  h = await startTestHerald({
    ALLOW_PRIVATE_DESTINATIONS: 'true',
    ALLOWED_DESTINATION_CIDRS: '127.0.0.0/8',
    ENGINE_MEDIA_HEADERS: `X-Api-Key: ${S3_KEY}`,
    ENGINE_MEDIA_PREFIXES: s3.prefix,
    MEDIA_MAX_BYTES: String(MAX),
  });
});
after(async () => {
  await Promise.all([s3.close(), customer.close()]);
  await h.close();
});

let n = 0;
/** An incoming image as messages.upsert carries it, with `message` extras (base64, mediaUrl). */
function image(extra: Obj, fromMe = false): Obj {
  n++;
  return evolutionBody('messages.upsert', {
    key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe, id: `3EB0MEDIA${String(n).padStart(10, '0')}` },
    message: {
      imageMessage: { url: 'https://mmg.whatsapp.net/enc', mimetype: 'image/png', caption: 'foto' },
      ...extra,
    },
    messageType: 'imageMessage',
    messageTimestamp: 1795341600,
  });
}

/** Posts `body` to a new instance with webhooks for message and message.any; both deliveries' payloads. */
async function deliver(t: TestContext, body: Obj): Promise<Obj[]> {
  const ins = await h.createInstance();
  const r = await TestReceiver.start();
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events: ['message', 'message.any'] });
  const res = await postEvolution(h.url, ins, body);
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const kinds = res.body.events.length;
  return (await r.waitFor(kinds)).map((g) => g.body.payload);
}

test('a base64 image: stored once, byte for byte behind one link that message and message.any share', async (t) => {
  const png = pngImage(24);
  const payloads = await deliver(t, image({ base64: png.toString('base64') }));
  assert.equal(payloads.length, 2);
  const [a, b] = payloads.map((p) => p.media);
  assert.equal(a.status, 'ready');
  assert.deepEqual(a, b, 'one media object');
  assert.equal(a.mimetype, 'image/png');
  assert.equal(a.sha256, sha256(png));
  const download = await fetch(a.url);
  assert.equal(download.status, 200);
  assert.deepEqual(Buffer.from(await download.arrayBuffer()), png);
  assert.ok(!('base64' in payloads[0]._evolution.message), 'the file is not delivered inline');
});

test('a base64 file beyond MEDIA_MAX_BYTES is too_large, and not stored', async (t) => {
  const [p] = await deliver(t, image({ base64: Buffer.alloc(MAX + 1, 7).toString('base64') }));
  assert.deepEqual(p.media, { status: 'too_large', mimetype: 'image/png' });
});

test('an S3 mediaUrl under ENGINE_MEDIA_PREFIXES: downloaded once, with the engine headers, for both events', async (t) => {
  const png = pngImage(16);
  const url = s3.serve(`evolution/ins/${n}/image.png`, { bytes: png, type: 'image/png' });
  const payloads = await deliver(t, image({ mediaUrl: url }));
  const [a, b] = payloads.map((p) => p.media);
  assert.equal(a.status, 'ready', JSON.stringify(a));
  assert.equal(a.media_id, b.media_id, 'one stored file');
  const asked = s3.requestsFor(url);
  assert.equal(asked.length, 1, 'one download');
  assert.equal(asked[0].headers['x-api-key'], S3_KEY);
  assert.deepEqual(Buffer.from(await (await fetch(a.url)).arrayBuffer()), png);
});

test('a mediaUrl outside ENGINE_MEDIA_PREFIXES is never asked, and the headers never leave', async (t) => {
  const url = customer.serve('steal.png', { bytes: pngImage(8), type: 'image/png' });
  const [p] = await deliver(t, image({ mediaUrl: url }));
  assert.deepEqual(p.media, { status: 'failed', mimetype: 'image/png' });
  assert.deepEqual(customer.requests, []);
});

test("the session's own media is outgoing; media neither inline nor on S3 is unavailable", async (t) => {
  const [own] = await deliver(t, image({ base64: pngImage(8).toString('base64') }, true));
  assert.deepEqual(own.media, { status: 'outgoing', mimetype: 'image/png' });
  const [none] = await deliver(t, image({}));
  assert.deepEqual(none.media, { status: 'unavailable', mimetype: 'image/png' });
  assert.equal(none.hasMedia, true);
  assert.equal(none.body, 'foto');
});
