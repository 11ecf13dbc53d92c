/** Upload and download of media (issue 8): real files on a real Herald, links checked with an injected clock. */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import {
  ADMIN_KEY,
  eventually,
  messagePayload,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import { pngImage, sha256, upload } from './files.ts';

const HOUR = 3600_000;
let now = Date.parse('2026-11-21T10:00:00Z');
let h: TestHerald;
let ins: string;

before(async () => {
  h = await startTestHerald({}, { clock: () => now });
  ins = await h.createInstance();
});
after(() => h.close());

/** Publishes a message whose media refers to `mediaId`. */
async function publishWithMedia(mediaId: string): Promise<void> {
  const r = await h.publish(ins, {
    event: 'message',
    payload: messagePayload({ hasMedia: true, media: { media_id: mediaId } }),
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
}

/**
 * A link as a receiver gets it: upload, publish a reference, read the delivery body Herald stored (a webhook to a
 * closed port is enabled just for the publish; test/media/media-delivery.test.ts has the real receiver).
 */
async function linkFor(
  data: Uint8Array,
  type: string,
): Promise<{ url: string; expires_at: string; id: string }> {
  const up = await upload(h.url, ins, data, type);
  assert.equal(up.status, 201);
  const whk = await h.createWebhook(
    ins,
    { destination_url: 'http://127.0.0.1:9/', events: ['message'] },
    false,
  );
  await h.request('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { body: { enabled: true } });
  await publishWithMedia(up.body.media_id);
  await h.request('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { body: { enabled: false } });
  const list = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${whk}`);
  const detail = await h.request(
    'GET',
    `/instances/${ins}/deliveries/${list.body.deliveries[0].delivery_id}`,
  );
  const media = JSON.parse(detail.body.delivery.request_body).payload.media;
  return { url: media.url, expires_at: media.expires_at, id: up.body.media_id };
}

const mediaFiles = () =>
  readdirSync(join(h.dataDir, 'media'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    /^(files|meta|tmp)\/./.test(f),
  );

describe('upload (POST /instances/{id}/media)', () => {
  test('an image is stored: 201 with media_id, mimetype, size and sha256', async () => {
    const image = pngImage();
    const r = await upload(h.url, ins, image, 'image/png');
    assert.equal(r.status, 201);
    assert.match(r.body.media_id, /^med_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...r.body, media_id: 'x' },
      { success: true, media_id: 'x', mimetype: 'image/png', size: image.length, sha256: sha256(image) },
    );
  });

  test('an empty file is a file: size 0 and the hash of nothing', async () => {
    const r = await upload(h.url, ins, new Uint8Array(0), null);
    assert.equal(r.status, 201);
    assert.equal(r.body.size, 0);
    assert.equal(r.body.mimetype, 'application/octet-stream');
    assert.equal(r.body.sha256, sha256(new Uint8Array(0)));
  });

  test('a 70 MiB stream without Content-Length is refused with 413 and nothing is kept', async () => {
    const before = mediaFiles();
    let sent = 0;
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    const body = new Readable({
      read() {
        this.push(sent++ < 70 ? chunk : null);
      },
    });
    const res = await request(`${h.url}/instances/${ins}/media`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'video/mp4' },
    });
    const answer = (await res.body.json()) as any;
    assert.equal(res.statusCode, 413);
    assert.equal(answer.error.code, 'payload_too_large');
    assert.match(answer.error.message, /MEDIA_MAX_BYTES \(67108864 bytes\)/);
    assert.deepEqual(mediaFiles(), before);
  });

  test('MEDIA_MAX_BYTES is the largest size accepted: one byte more is a 413', async () => {
    const small = await startTestHerald({ MEDIA_MAX_BYTES: '10' });
    try {
      const id = await small.createInstance();
      assert.equal((await upload(small.url, id, Buffer.alloc(10, 1), 'text/plain')).status, 201);
      const over = await upload(small.url, id, Buffer.alloc(11, 1), 'text/plain');
      assert.equal(over.status, 413);
      assert.match(over.body.error.message, /MEDIA_MAX_BYTES \(10 bytes\)/);
    } finally {
      await small.close();
    }
  });

  test('a Content-Length over the limit is answered 413 before the body is sent', async () => {
    // A raw socket: HTTP clients refuse to send a body shorter than the Content-Length they were given.
    const socket = connect(Number(new URL(h.url).port), '127.0.0.1');
    socket.write(
      `POST /instances/${ins}/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        `Content-Type: video/mp4\r\nContent-Length: ${65 * 1024 * 1024}\r\n\r\nonly a few bytes`,
    );
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d) => {
        text += d;
      });
      socket.on('close', () => resolve(text));
    });
    assert.match(answer, /^HTTP\/1\.1 413 /);
    assert.match(answer, /connection: close/i);
    assert.match(answer, /"payload_too_large"/);
  });

  test('an upload cut off mid-stream leaves nothing behind', async () => {
    const before = mediaFiles();
    const socket = connect(Number(new URL(h.url).port), '127.0.0.1');
    socket.write(
      `POST /instances/${ins}/media HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n` +
        'Content-Type: image/png\r\nContent-Length: 1000000\r\n\r\n',
    );
    socket.write(Buffer.alloc(300_000, 1));
    await eventually(async () => (mediaFiles().some((f) => f.startsWith('tmp/')) ? true : undefined));
    socket.destroy();
    await eventually(async () => (mediaFiles().length === before.length ? true : undefined));
    assert.deepEqual(mediaFiles(), before);
  });

  test('a malformed Content-Type is a 400 naming it; no key is a 401; another instance is a 404', async () => {
    const bad = await upload(h.url, ins, Buffer.from('x'), 'not a type');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.details[0].field, 'Content-Type');
    const voice = await upload(h.url, ins, Buffer.from('OggS'), 'audio/ogg; codecs=opus');
    assert.equal(voice.body.mimetype, 'audio/ogg; codecs=opus');
    const res = await fetch(`${h.url}/instances/${ins}/media`, { method: 'POST', body: 'x' });
    assert.equal(res.status, 401);
    const missing = await upload(h.url, 'ins_doesnotexist00000000000', Buffer.from('x'), 'text/plain');
    assert.equal(missing.status, 404);
  });
});

describe('signed links (GET /media/{media_id})', () => {
  test('the link serves the exact bytes with Content-Type, Content-Length and ETag, no key needed', async () => {
    const image = pngImage(48);
    const link = await linkFor(image, 'image/png');
    assert.ok(link.url.startsWith(`${h.url}/media/${link.id}?expires=`));
    assert.equal(link.expires_at, new Date(now + 24 * HOUR).toISOString());
    const res = await fetch(link.url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.equal(res.headers.get('content-length'), String(image.length));
    assert.equal(res.headers.get('etag'), `"${sha256(image)}"`);
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(sha256(new Uint8Array(await res.arrayBuffer())), sha256(image));

    const again = await fetch(link.url, { headers: { 'if-none-match': `"${sha256(image)}"` } });
    assert.equal(again.status, 304);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
    const head = await fetch(link.url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String(image.length));
  });

  test('Range requests get 206 with the slice, suffix ranges work, and an unsatisfiable one is a 416', async () => {
    const data = Buffer.from('0123456789abcdefghij');
    const link = await linkFor(data, 'text/plain');
    const part = await fetch(link.url, { headers: { range: 'bytes=5-9' } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get('content-range'), 'bytes 5-9/20');
    assert.equal(part.headers.get('content-length'), '5');
    assert.equal(await part.text(), '56789');
    const tail = await fetch(link.url, { headers: { range: 'bytes=-3' } });
    assert.equal(await tail.text(), 'hij');
    const open = await fetch(link.url, { headers: { range: 'bytes=18-' } });
    assert.equal(await open.text(), 'ij');
    const beyond = await fetch(link.url, { headers: { range: 'bytes=20-30' } });
    assert.equal(beyond.status, 416);
    assert.equal(beyond.headers.get('content-range'), 'bytes */20');
    const stale = await fetch(link.url, { headers: { range: 'bytes=0-0', 'if-range': '"other"' } });
    assert.equal(stale.status, 200, 'a Range whose If-Range does not match gets the whole file');
    assert.equal(await stale.text(), data.toString());
  });

  test('an empty file downloads as 0 bytes', async () => {
    const link = await linkFor(new Uint8Array(0), 'application/octet-stream');
    const res = await fetch(link.url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), '0');
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  test('a tampered or foreign link is a 403', async () => {
    const a = await linkFor(Buffer.from('file a'), 'text/plain');
    const b = await linkFor(Buffer.from('file b'), 'text/plain');
    const u = new URL(a.url);
    const tamper = async (change: (q: URLSearchParams) => void, path = u.pathname) => {
      const q = new URLSearchParams(u.search);
      change(q);
      return (await fetch(`${u.origin}${path}?${q}`)).status;
    };
    const sig = u.searchParams.get('sig') as string;
    assert.equal(await tamper((q) => q.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`)), 403);
    assert.equal(await tamper((q) => q.set('expires', String(Number(q.get('expires')) + 3600))), 403);
    assert.equal(await tamper((q) => q.delete('sig')), 403);
    assert.equal(await tamper((q) => q.append('sig', sig)), 403, 'a repeated sig is no single signature');
    // b's signature on a's path: a link for one file opens no other.
    assert.equal(await tamper((q) => q.set('sig', new URL(b.url).searchParams.get('sig') as string)), 403);
    const res = await fetch(`${u.origin}/media/${b.id}${u.search}`);
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as any).error.code, 'forbidden');
  });

  test('a link answers 410 from expires_at on (injected clock), and its file is swept later', async () => {
    const link = await linkFor(Buffer.from('short-lived'), 'text/plain');
    const saved = now;
    try {
      now = Date.parse(link.expires_at) - 1000;
      assert.equal((await fetch(link.url)).status, 200);
      now = Date.parse(link.expires_at);
      const gone = await fetch(link.url);
      assert.equal(gone.status, 410);
      assert.equal(((await gone.json()) as any).error.code, 'gone');
      assert.ok(mediaFiles().includes(`files/${link.id}`), 'kept until the sweeper runs');
      now = Date.parse(link.expires_at) + 10 * 60_000;
      await h.herald.mediaSweeper.sweep();
      assert.ok(!mediaFiles().includes(`files/${link.id}`), 'the sweeper deleted the expired file');
      assert.ok(!mediaFiles().includes(`meta/${link.id}.json`));
    } finally {
      now = saved;
    }
  });
  test('a deleted instance takes its links with it (404)', async () => {
    const other = await h.createInstance('short-lived');
    const saved = ins;
    ins = other;
    try {
      const link = await linkFor(Buffer.from('goes with its instance'), 'text/plain');
      assert.equal((await fetch(link.url)).status, 200);
      assert.equal((await h.request('DELETE', `/instances/${other}`)).status, 200);
      assert.equal((await fetch(link.url)).status, 404);
    } finally {
      ins = saved;
    }
  });
});

describe('ingest of media references (SPEC §7)', () => {
  test("an unknown, another instance's, or an expired media_id is a 400 naming payload.media.media_id", async () => {
    const other = await h.createInstance('other');
    const theirs = await upload(h.url, other, Buffer.from('theirs'), 'text/plain');
    for (const id of ['med_00000000000000000000000000', theirs.body.media_id]) {
      const r = await h.publish(ins, {
        event: 'message',
        payload: messagePayload({ hasMedia: true, media: { media_id: id } }),
      });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.details[0].field, 'payload.media.media_id');
      assert.match(r.body.error.message, /uploaded to this instance/);
    }
    const mine = await upload(h.url, ins, Buffer.from('mine'), 'text/plain');
    const saved = now;
    now += 25 * HOUR;
    try {
      const r = await h.publish(ins, {
        event: 'message',
        payload: messagePayload({ hasMedia: true, media: { media_id: mine.body.media_id } }),
      });
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /payload\.media\.media_id: media med_\w+ has expired/);
    } finally {
      now = saved;
    }
  });

  test('in a batch, a bad reference refuses the whole batch, naming events[i]', async () => {
    const mine = await upload(h.url, ins, Buffer.from('x'), 'text/plain');
    const event = (media_id: string) => ({
      event: 'message',
      payload: messagePayload({ hasMedia: true, media: { media_id } }),
    });
    const r = await h.request('POST', `/instances/${ins}/events/batch`, {
      body: { events: [event(mine.body.media_id), event('med_00000000000000000000000000')] },
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.details[0].field, 'events[1].payload.media.media_id');
  });

  test('media while hasMedia is false is a 400 naming payload.media', async () => {
    const mine = await upload(h.url, ins, Buffer.from('x'), 'text/plain');
    const patch = { hasMedia: false, media: { media_id: mine.body.media_id } };
    const r = await h.publish(ins, { event: 'message', payload: messagePayload(patch) });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /payload\.media: must be absent or null when hasMedia is false/);
  });

  test('a media_id on a message the session sent is delivered as outgoing: no copy of outgoing media is kept', async () => {
    const mine = await upload(h.url, ins, Buffer.from('x'), 'text/plain');
    const whk = await h.createWebhook(ins, {
      destination_url: 'http://127.0.0.1:9/',
      events: ['message.any'],
    });
    const r = await h.publish(ins, {
      event: 'message.any',
      payload: messagePayload({ fromMe: true, hasMedia: true, media: { media_id: mine.body.media_id } }),
    });
    await h.request('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { body: { enabled: false } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const list = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${whk}`);
    const detail = await h.request(
      'GET',
      `/instances/${ins}/deliveries/${list.body.deliveries[0].delivery_id}`,
    );
    assert.deepEqual(JSON.parse(detail.body.delivery.request_body).payload.media, { status: 'outgoing' });
  });
});
