import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { completeMedia, engineErrorText, referencedMediaId } from '../../src/domain/media-object.ts';

const ID = 'med_01jd5q7h2k9x4m8n3p6r0t1v2w';
const ready = {
  media_id: ID,
  mimetype: 'image/png',
  size: 1887,
  sha256: 'ab'.repeat(32),
  url: `https://hooks.example.com/media/${ID}?expires=1795341600&sig=x`,
  expires_at: '2026-11-22T10:00:00.000Z',
};

describe('media object completed at ingest (seed 2.5, SPEC §7)', () => {
  test('a reference to an upload is found; other media objects refer to none', () => {
    assert.equal(referencedMediaId({ fromMe: false, media: { media_id: ID } }), ID);
    assert.equal(referencedMediaId({ fromMe: false, media: { media_id: ID, status: 'ready' } }), ID);
    assert.equal(referencedMediaId({ fromMe: false, media: { ...ready, status: 'ready' } }), null);
    assert.equal(referencedMediaId({ fromMe: false, media: { status: 'failed', media_id: ID } }), null);
    assert.equal(referencedMediaId({ fromMe: false, hasMedia: false }), null);
    assert.equal(referencedMediaId({ fromMe: true, media: { media_id: ID } }), null);
  });

  test('a reference becomes ready with mimetype, media_id, url, expires_at (and size, sha256)', () => {
    const payload = { id: 'm1', hasMedia: true, media: { media_id: ID } };
    assert.deepEqual(completeMedia(payload, ready), {
      id: 'm1',
      hasMedia: true,
      media: { status: 'ready', ...ready },
    });
    assert.deepEqual(payload.media, { media_id: ID }, 'the published payload is not changed in place');
  });

  test('without a reference to complete, the payload is returned as it is', () => {
    const payload = { fromMe: false, media: { status: 'failed' } };
    assert.equal(completeMedia(payload, null), payload);
  });
});

describe('the engine’s own media error in words', () => {
  test('a string, a message, the first line of details (GOWS), else its JSON; long ones cut', () => {
    assert.equal(engineErrorText('download failed'), 'download failed');
    assert.equal(engineErrorText({ message: 'gone', details: 'ignored' }), 'gone');
    const gows = {
      code: 9,
      details:
        'Error: 9 FAILED_PRECONDITION: failed to download media\n    at callErrorFromStatus (call.js:32:19)',
      metadata: { internalRepr: {} },
    };
    assert.equal(engineErrorText(gows), 'Error: 9 FAILED_PRECONDITION: failed to download media');
    assert.equal(engineErrorText({ code: 9 }), '{"code":9}');
    assert.equal(engineErrorText(true), 'true');
    const long = engineErrorText('x'.repeat(1000));
    assert.equal(long.length, 300);
    assert.ok(long.endsWith('…'));
  });
});
