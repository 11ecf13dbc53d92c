/**
 * The key file on a first start: DATA_DIR may not exist yet (on PostgreSQL nothing else creates it), and the key is
 * made there, readable by its owner only (the directory too), and found again on the next start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { keyFile, openSecretBox } from '../../src/secret-key.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';

test('a first start creates DATA_DIR for the key file when nothing else has', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'herald-keyfile-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dataDir = join(root, 'not', 'yet', 'made');
  const config = loadConfig({ DATA_DIR: dataDir });
  // The store lives elsewhere, as PostgreSQL's would: it does not make DATA_DIR.
  const store = openSqliteStore(':memory:');
  t.after(() => store.close());

  const first = await openSecretBox(config, store);
  assert.equal(statSync(dataDir).mode & 0o777, 0o700, 'DATA_DIR is its owner’s alone');
  assert.equal(statSync(keyFile(dataDir)).mode & 0o777, 0o600);
  const again = await openSecretBox(config, store);
  assert.equal(again.fingerprint(), first.fingerprint(), 'the next start reads the same key');
});
