/**
 * The media store over both blob adapters — the data directory and a real S3-compatible server (s3rver) — held
 * to the same behaviour: metadata beside the bytes, ranges, extension, and the sweeper's batches in expiry order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import type { Blobs } from '../../src/media/blobs.ts';
import { FsBlobs } from '../../src/media/fs-blobs.ts';
import { type MediaMeta, MediaStore, SWEEP_GRACE_MS } from '../../src/media/media-store.ts';
import { S3Blobs } from '../../src/media/s3-blobs.ts';
import { sha256 } from './files.ts';
import { type S3Server, startS3Server } from './s3-server.ts';

const T0 = Date.parse('2026-11-21T10:00:00Z');
let dir: string;
let s3: S3Server;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herald-media-store-'));
  s3 = await startS3Server();
  // The SDK takes credentials from its usual chain; here, the environment.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
});
after(async () => {
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A local file as an upload leaves it, and its metadata. */
function spooled(content: string, expiresAt: number): { path: string; meta: MediaMeta } {
  const id = `med_${String(++n).padStart(26, '0')}`;
  const path = join(dir, `${id}.part`);
  writeFileSync(path, content);
  const data = Buffer.from(content);
  return {
    path,
    meta: {
      media_id: id,
      instance_id: 'ins_test',
      mimetype: 'text/plain',
      size: data.length,
      sha256: sha256(data),
      created_at: T0,
      expires_at: expiresAt,
    },
  };
}

const adapters: [string, () => Blobs][] = [
  ['data directory', () => new FsBlobs(join(dir, `fs-${++n}`), join(dir, 'tmp'))],
  [
    'S3-compatible server',
    () =>
      new S3Blobs({
        bucket: s3.bucket,
        prefix: `run-${++n}/`,
        endpoint: s3.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
      }),
  ],
];

for (const [name, open] of adapters) {
  describe(`media store on the ${name}`, () => {
    test('a stored file reads back whole and by range, with its metadata; unknown ids are null', async () => {
      const store = new MediaStore(open());
      const { path, meta } = spooled('hello media store', T0 + 1000);
      await store.put(path, meta);
      assert.deepEqual(await store.get(meta.media_id), meta);
      assert.equal(
        await text((await store.read(meta.media_id)) as NodeJS.ReadableStream),
        'hello media store',
      );
      const part = await store.read(meta.media_id, { start: 6, end: 10 });
      assert.equal(await text(part as NodeJS.ReadableStream), 'media');
      assert.equal(await store.get('med_00000000000000000000000000'), null);
      assert.equal(await store.get('../../etc/passwd'), null);
      assert.equal(await store.read('med_00000000000000000000000000'), null);
      await store.close();
    });

    test('the sweeper deletes only what expired (plus grace), in expiry order and in batches', async () => {
      const store = new MediaStore(open());
      const files = [3, 1, 2].map((k) => spooled(`file ${k}`, T0 + k * 60_000));
      for (const f of files) await store.put(f.path, f.meta);
      const [third, first, second] = files.map((f) => f.meta);

      // Nothing is due before the first expiry plus the grace.
      assert.deepEqual(await store.sweep(first.expires_at + SWEEP_GRACE_MS - 1, 10), {
        markers: 0,
        deleted: [],
      });
      // A batch of one handles one marker, the earliest.
      assert.deepEqual((await store.sweep(T0 + 10 * 60_000 + SWEEP_GRACE_MS, 1)).deleted, [first.media_id]);
      assert.equal(await store.get(first.media_id), null);
      assert.equal(await store.read(first.media_id), null);

      // A new link keeps `second` alive past its old expiry: its old marker is dropped, the file stays.
      const extended = await store.extend(second, T0 + 60 * 60_000);
      assert.equal((await store.get(second.media_id))?.expires_at, extended.expires_at);
      const r = await store.sweep(T0 + 10 * 60_000 + SWEEP_GRACE_MS, 10);
      assert.deepEqual(r.deleted, [third.media_id]);
      assert.equal(r.markers, 2);
      assert.ok(await store.get(second.media_id));

      const late = await store.sweep(T0 + 60 * 60_000 + SWEEP_GRACE_MS, 10);
      assert.deepEqual(late.deleted, [second.media_id]);
      assert.deepEqual(await store.blobs.list('files/', 10), []);
      assert.deepEqual(await store.blobs.list('meta/', 10), []);
      assert.deepEqual(await store.blobs.list('expiry/', 10), []);
      await store.close();
    });
  });
}
