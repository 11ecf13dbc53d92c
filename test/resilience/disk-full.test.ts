/**
 * A full disk under the embedded store: SQLite's own error (SQLITE_FULL) is what Herald reports and logs, not the
 * "cannot rollback" of a transaction SQLite had already rolled back; ingest answers 503 with Retry-After and /readyz
 * 503 while writes fail, and both recover by themselves once there is room again. The disk is a real one: SQLite's
 * max_page_count for the store, a small tmpfs (it needs root to mount) for Herald as a whole.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { SqliteDatabase, sqliteUnavailable } from '../../src/store/sqlite/database.ts';
import { eventually, messagePayload, startTestHerald } from '../support/herald.ts';
import { onPostgres } from '../support/postgres.ts';

test('a transaction that fills the database fails with SQLITE_FULL, read as the database unavailable', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-full-'));
  const db = new SqliteDatabase(join(dir, 'herald.db'));
  try {
    const { page_count } = db.q('PRAGMA page_count').get() as { page_count: number };
    db.q(`PRAGMA max_page_count = ${page_count}`).get();
    const write = () =>
      db.tx(() => db.q("INSERT INTO settings (name, value) VALUES ('big', ?)").run('x'.repeat(200_000)));
    assert.throws(write, (err: Error & { errcode?: number }) => {
      assert.equal(err.errcode, 13, err.message);
      assert.equal(sqliteUnavailable(err), 'database or disk is full (SQLITE_FULL)');
      return true;
    });
    // The connection is usable afterwards: no transaction was left open.
    db.q(`PRAGMA max_page_count = ${page_count + 1000}`).get();
    write();
  } finally {
    void db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Mounts a tmpfs of `size` at a new directory, or says why it cannot. */
function smallDisk(size: string): { dir: string; unmount(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-tmpfs-'));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `a full disk needs a small tmpfs, and mounting one failed (root only): ${(mount.stderr || mount.error?.message || '').trim()}`;
  }
  return {
    dir,
    unmount() {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Fills the rest of the disk under `dir` with one file; returns its path. */
function fill(dir: string): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return file;
}

const disk = onPostgres ? 'the disk-full test is for the embedded SQLite store' : smallDisk('8m');

test('disk full: ingest answers 503 with Retry-After, /readyz 503, SQLITE_FULL logged; both recover once there is room', {
  skip: typeof disk === 'string' ? disk : false,
}, async () => {
  if (typeof disk === 'string') return;
  const logged: string[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk, _enc, done) {
        logged.push(String(chunk));
        done();
      },
    }),
  );
  const dataDir = join(disk.dir, 'data');
  mkdirSync(dataDir);
  const h = await startTestHerald({}, { dataDir, logger });
  try {
    const instanceId = await h.createInstance();
    const publish = () => h.publish(instanceId, { event: 'message', payload: messagePayload() });
    assert.equal((await publish()).status, 202);
    assert.equal((await h.request('GET', '/readyz', { key: null })).status, 200);

    const filler = fill(disk.dir);
    // The write-ahead log may still have room inside its file: publish until a write needs more.
    const refused = await eventually(
      async () => {
        const r = await publish();
        assert.ok(r.status === 202 || r.status === 503, `${r.status} ${JSON.stringify(r.body)}`);
        return r.status === 503 ? r : undefined;
      },
      20_000,
      'an ingest refused for want of room',
    );
    assert.equal(refused.headers.get('retry-after'), '5');
    assert.equal(refused.body.error.code, 'unavailable');
    assert.match(refused.body.error.message, /the database is unavailable; retry in 5 seconds/);
    const ready = await h.request('GET', '/readyz', { key: null });
    assert.equal(ready.status, 503, JSON.stringify(ready.body));
    assert.ok(
      logged.some((line) => /SQLITE_FULL/.test(line) && /database or disk is full/.test(line)),
      logged.join(''),
    );
    assert.ok(!logged.some((line) => /cannot rollback/.test(line)), logged.join(''));

    rmSync(filler);
    await eventually(
      async () => ((await h.request('GET', '/readyz', { key: null })).status === 200 ? true : undefined),
      5000,
      '/readyz 200 once there is room again',
    );
    assert.equal((await publish()).status, 202);
  } finally {
    await h.close();
    disk.unmount();
  }
});
