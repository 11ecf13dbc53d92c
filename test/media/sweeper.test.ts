/** The media sweeper on its timer (injected clock): expired files go, live ones stay, crash leftovers are cleared. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { FsBlobs } from '../../src/media/fs-blobs.ts';
import { MediaStore, SWEEP_GRACE_MS } from '../../src/media/media-store.ts';
import { MediaSweeper } from '../../src/media/sweeper.ts';
import { eventually } from '../support/herald.ts';

const dir = mkdtempSync(join(tmpdir(), 'herald-sweeper-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('on its timer, the sweeper deletes expired files in batches and removes hour-old upload leftovers', async () => {
  const T0 = Date.parse('2026-11-21T10:00:00Z');
  let now = T0;
  const spool = join(dir, 'tmp');
  const store = new MediaStore(new FsBlobs(dir, spool));
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const id = `med_${String(i).padStart(26, '0')}`;
    const path = join(dir, `${id}.part`);
    writeFileSync(path, `file ${i}`);
    // Files 0..4 expire at T0 + 1 min; 5 and 6 a day later.
    const expires_at = T0 + (i < 5 ? 60_000 : 86_400_000);
    await store.put(path, {
      media_id: id,
      instance_id: 'ins_x',
      mimetype: 'text/plain',
      size: 6,
      sha256: '',
      created_at: T0,
      expires_at,
    });
    ids.push(id);
  }
  mkdirSync(spool, { recursive: true });
  const leftover = join(spool, 'crashed.part');
  const fresh = join(spool, 'uploading.part');
  writeFileSync(leftover, 'half');
  writeFileSync(fresh, 'in progress');
  const twoHoursAgo = (Date.now() - 2 * 3600_000) / 1000;
  utimesSync(leftover, twoHoursAgo, twoHoursAgo);

  const sweeper = new MediaSweeper({
    media: store,
    spoolDir: spool,
    clock: () => now,
    logger: pino({ level: 'silent' }),
    intervalMs: 20,
    batch: 2, // seven files, five expired: three batches in one round
  });
  sweeper.start();
  try {
    now = T0 + 60_000 + SWEEP_GRACE_MS + 1;
    await eventually(async () => ((await store.get(ids[4])) === null ? true : undefined), 5000, 'sweep');
    await eventually(async () => (!existsSync(leftover) ? true : undefined), 5000, 'spool cleanup');
    for (const id of ids.slice(0, 5)) assert.equal(await store.get(id), null, id);
    for (const id of ids.slice(5)) assert.ok(await store.get(id), `${id} is still live`);
    assert.ok(existsSync(fresh), 'an upload in progress is left alone');
  } finally {
    await sweeper.stop();
  }
});
