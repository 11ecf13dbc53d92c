/**
 * A graceful stop with a media upload in flight, as a real process: the upload is cut short with a 503 and
 * Retry-After, its temporary file is removed, and the process exits 0 at once, not at the stop's hard deadline.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { spoolDir } from '../../src/media/open-media-store.ts';
import { ADMIN_KEY, eventually } from '../support/herald.ts';
import { rawRequest, statusOf } from '../support/raw-client.ts';
import { spawnHerald } from '../support/spawn.ts';

const partFiles = (dataDir: string) => {
  try {
    return readdirSync(spoolDir(dataDir)).filter((f) => f.endsWith('.part'));
  } catch {
    return [];
  }
};

test('SIGTERM during a trickling upload: the client gets a 503, no .part is left, exit 0 promptly', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-upload-stop-'));
  // The stop's hard deadline is this plus margins (16 s): a stop that waited for the upload would reach it.
  const herald = await spawnHerald(dataDir, { DELIVERY_TIMEOUT_MS: '10000' });
  try {
    const ins = await herald.request('POST', '/instances', { name: 'uploads' });
    assert.equal(ins.status, 201);
    const c = rawRequest(
      herald.url,
      `POST /instances/${ins.body.instance_id}/media HTTP/1.1\nHost: herald\nAuthorization: Bearer ${ADMIN_KEY}\n` +
        `Content-Type: video/mp4\nContent-Length: ${10 * 1024 * 1024}`,
    );
    // 1 KiB every 50 ms: the upload would take minutes.
    const sending = c.send(10 * 1024 * 1024, { piece: 1024, pauseMs: 50 });
    await eventually(
      async () => (partFiles(dataDir).length === 1 ? true : undefined),
      5000,
      'the .part file',
    );

    const signalled = Date.now();
    herald.child.kill('SIGTERM');
    const exit = await Promise.race([
      herald.exited,
      new Promise((resolve) => setTimeout(() => resolve('still running after 6 s'), 6000)),
    ]);
    const took = Date.now() - signalled;
    t.diagnostic(`exited ${took} ms after SIGTERM`);
    assert.deepEqual(exit, { code: 0, signal: null }, herald.output());
    const { text } = await c.closed;
    assert.equal(statusOf(text), 503, text);
    assert.match(text, /\r\nretry-after: 5\r\n/i);
    assert.match(text, /"code":"unavailable"/);
    assert.match(text, /Herald is stopping: the upload was not kept; send it again/);
    assert.deepEqual(partFiles(dataDir), []);
    await sending;
  } finally {
    await herald.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
