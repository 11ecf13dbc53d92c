/**
 * Media end to end (seed 2.5, SPEC §7): the engine uploads, publishes, a real receiver gets the delivery and
 * downloads the file by its url; each of the five media states arrives as the seed describes; a redelivery after
 * the link expired says so in the log while the body stays byte for byte the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { pngImage, sha256, upload, uploadStream } from './files.ts';

const HOUR = 3600_000;
/** Wall time plus an offset the test moves forward: retries still fall due, and expiry can be reached at once. */
let offset = 0;
const clock = () => Date.now() + offset;
let h: TestHerald;
let receiver: TestReceiver;
let ins: string;
let whk: string;

before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05' }, { clock });
  receiver = await TestReceiver.start();
  ins = await h.createInstance();
  whk = await h.createWebhook(ins, { destination_url: receiver.url, events: ['message', 'message.any'] });
});
after(async () => {
  await h.close();
  await receiver.close();
});

/** Publishes and returns the body the receiver got for this event. */
async function deliver(event: string, payload: Record<string, unknown>) {
  const r = await h.publish(ins, { event, payload });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return eventually(
    async () => receiver.received.find((x) => x.body?.event_id === r.body.event_id),
    10_000,
    `delivery of ${r.body.event_id}`,
  );
}

describe('a file travels from the engine to the receiver', () => {
  for (const [name, data, type] of [
    ['an image', pngImage(64), 'image/png'],
    ['an empty file', Buffer.alloc(0), 'application/octet-stream'],
  ] as const) {
    test(`${name}: upload, publish, receive ready media, download by url, same sha256`, async () => {
      const up = await upload(h.url, ins, data, type);
      assert.equal(up.status, 201);
      const got = await deliver(
        'message',
        messagePayload({ hasMedia: true, media: { media_id: up.body.media_id } }),
      );
      const media = got.body.payload.media;
      assert.deepEqual(Object.keys(media).sort(), [
        'expires_at',
        'media_id',
        'mimetype',
        'sha256',
        'size',
        'status',
        'url',
      ]);
      assert.equal(media.status, 'ready');
      assert.equal(media.mimetype, type);
      assert.equal(media.media_id, up.body.media_id);
      assert.match(media.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
      assert.ok(Date.parse(media.expires_at) >= clock() + 24 * HOUR - 60_000, 'lives MEDIA_TTL (24 h)');
      const res = await fetch(media.url); // as the receiver would: no API key
      assert.equal(res.status, 200);
      const file = new Uint8Array(await res.arrayBuffer());
      assert.equal(sha256(file), sha256(data));
      assert.equal(sha256(file), media.sha256);
    });
  }
});

describe('the five media states in a delivered payload (seed 2.5)', () => {
  test('ready: the file is stored and has a url and expires_at', async () => {
    const up = await upload(h.url, ins, Buffer.from('voice note'), 'audio/ogg; codecs=opus');
    const got = await deliver(
      'message',
      messagePayload({ hasMedia: true, media: { media_id: up.body.media_id } }),
    );
    assert.equal(got.body.payload.media.status, 'ready');
    assert.equal(got.body.payload.hasMedia, true);
    assert.equal((await fetch(got.body.payload.media.url)).status, 200);
  });

  test('too_large: the upload over MEDIA_MAX_BYTES is refused, the event says too_large, no url', async () => {
    assert.equal(await uploadStream(h.url, ins, 70, 1), 413);
    const got = await deliver(
      'message',
      messagePayload({ hasMedia: true, media: { status: 'too_large', mimetype: 'video/mp4' } }),
    );
    assert.deepEqual(got.body.payload.media, { status: 'too_large', mimetype: 'video/mp4' });
  });

  test('failed and unavailable: passed on as given, with no url', async () => {
    for (const media of [{ status: 'failed', mimetype: 'image/jpeg' }, { status: 'unavailable' }]) {
      const got = await deliver('message', messagePayload({ hasMedia: true, media }));
      assert.deepEqual(got.body.payload.media, media);
    }
  });

  test('outgoing: a message the session sent; Herald fills the status, keeps no copy, gives no url', async () => {
    const got = await deliver(
      'message.any',
      messagePayload({ fromMe: true, hasMedia: true, media: { mimetype: 'image/jpeg' } }),
    );
    assert.deepEqual(got.body.payload.media, { status: 'outgoing', mimetype: 'image/jpeg' });
    const stated = await deliver(
      'message.any',
      messagePayload({ fromMe: true, hasMedia: true, media: { status: 'outgoing' } }),
    );
    assert.deepEqual(stated.body.payload.media, { status: 'outgoing' });
  });
});

describe('lifetime', () => {
  test('a redelivery after expiry sends the same bytes and the log says the media link has expired', async () => {
    const up = await upload(h.url, ins, pngImage(8), 'image/png');
    receiver.answer = () => ({ status: 500 });
    const r = await h.publish(ins, {
      event: 'message',
      payload: messagePayload({ hasMedia: true, media: { media_id: up.body.media_id } }),
    });
    const path = `/instances/${ins}/deliveries`;
    const failed = await eventually(async () => {
      const list = await h.request('GET', `${path}?status=failed&webhook_id=${whk}`);
      return list.body.deliveries.find((d: any) => d.event_id === r.body.event_id);
    });
    const first = receiver.received.find((x) => x.body?.event_id === r.body.event_id);
    assert.ok(first);
    const expiresAt = Date.parse(first.body.payload.media.expires_at);

    offset = expiresAt - Date.now() + 1000; // one second past the link's expiry
    receiver.answer = () => ({ status: 200 });
    const count = receiver.received.length;
    const again = await h.request('POST', `${path}/${failed.delivery_id}/redeliver`);
    assert.equal(again.status, 202);
    assert.match(again.body.warnings[0], /^payload\.media: the media link expired at /);
    const last = (await receiver.waitFor(count + 1))[count];
    assert.deepEqual(last.rawBody, first.rawBody, 'the body is redelivered unchanged');
    assert.equal((await fetch(last.body.payload.media.url)).status, 410);

    const detail = await eventually(async () => {
      const d = await h.request('GET', `${path}/${failed.delivery_id}`);
      return d.body.delivery.status === 'delivered' ? d.body.delivery : undefined;
    });
    const attempts = detail.attempts as any[];
    assert.equal(attempts.length, 7);
    assert.ok(
      attempts.slice(0, 6).every((a) => a.note === null),
      'scheduled attempts carried a live link',
    );
    assert.equal(attempts[6].trigger, 'manual');
    assert.match(
      attempts[6].note,
      /^media link expired at .*: the receiver can no longer download the file$/,
    );
    offset = 0;
  });
});
