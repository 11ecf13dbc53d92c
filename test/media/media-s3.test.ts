/** Herald with MEDIA_STORE=s3://… against a real S3-compatible server on 127.0.0.1 (see s3-server.ts). */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { S3Blobs } from '../../src/media/s3-blobs.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { pngImage, sha256, upload, uploadStream } from './files.ts';
import { type S3Server, startS3Server } from './s3-server.ts';

let s3: S3Server;
let h: TestHerald;
let receiver: TestReceiver;
let bucket: S3Blobs;

before(async () => {
  s3 = await startS3Server();
  // Credentials come from the AWS SDK's usual chain: here the environment, as in a deployment.
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  h = await startTestHerald(s3.env('herald/media'));
  receiver = await TestReceiver.start();
  bucket = new S3Blobs({
    bucket: s3.bucket,
    prefix: 'herald/media/',
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
  });
});
after(async () => {
  await h.close();
  await receiver.close();
  await bucket.close();
  await s3.close();
});

test('an image goes through the bucket: upload, delivery, download by url, same sha256', async () => {
  const ins = await h.createInstance();
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
  const image = pngImage(40);
  const up = await upload(h.url, ins, image, 'image/png');
  assert.equal(up.status, 201);
  assert.deepEqual(await bucket.list('files/', 10), [`files/${up.body.media_id}`]);
  assert.ok(!existsSync(join(h.dataDir, 'media', 'files')), 'nothing stored in the data directory');

  const r = await h.publish(ins, {
    event: 'message',
    payload: messagePayload({ hasMedia: true, media: { media_id: up.body.media_id } }),
  });
  const got = await eventually(async () =>
    receiver.received.find((x) => x.body?.event_id === r.body.event_id),
  );
  const res = await fetch(got.body.payload.media.url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal(sha256(new Uint8Array(await res.arrayBuffer())), sha256(image));
  const part = await fetch(got.body.payload.media.url, { headers: { range: 'bytes=0-7' } });
  assert.equal(part.status, 206);
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), image.subarray(0, 8));
});

test('an upload over MEDIA_MAX_BYTES leaves nothing in the bucket', async () => {
  const ins = await h.createInstance();
  const before = await bucket.list('files/', 100);
  assert.equal(await uploadStream(h.url, ins, 70, 2), 413);
  assert.deepEqual(await bucket.list('files/', 100), before);
  assert.deepEqual(
    await bucket.list('meta/', 100),
    before.map((k) => `meta/${k.slice(6)}.json`),
  );
});
