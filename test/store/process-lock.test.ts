/** One process per SQLite database (its leases live in memory): a second store on the same file is refused. */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import { StoreInUse } from '../../src/store/sqlite/process-lock.ts';
import { spawnHerald } from '../support/spawn.ts';

const freshDir = () => mkdtempSync(join(tmpdir(), 'herald-lock-'));

test('a second store on the same database is refused until the first one is closed', async () => {
  const file = join(freshDir(), 'herald.db');
  const first = openSqliteStore(file);
  assert.throws(() => openSqliteStore(file), StoreInUse);
  await first.close();
  const again = openSqliteStore(file);
  await again.close();
});

test('a second Herald process on the same DATA_DIR stops at start and says why; a killed one leaves no lock', async () => {
  const dir = freshDir();
  const first = await spawnHerald(dir);
  try {
    const refused = await spawnHerald(dir).then(
      () => assert.fail('the second process started'),
      (err: Error) => err.message,
    );
    assert.match(refused, /exited \(1\) before listening/);
    assert.match(refused, /herald\.db is in use by another Herald process/);
  } finally {
    await first.kill('SIGKILL');
  }
  const next = await spawnHerald(dir);
  try {
    assert.equal((await next.request('GET', '/healthz')).status, 200);
  } finally {
    await next.kill('SIGTERM');
  }
});
