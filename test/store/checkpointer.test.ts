/**
 * The checkpoint thread: what is committed reaches the database file while Herald runs. Without it, only the
 * connection's own automatic checkpoint would copy the WAL back, after 40,000 pages, or a close.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqliteDatabase } from '../../src/store/sqlite/database.ts';
import { eventually } from '../support/herald.ts';

const ROWS = 500;
const ROW_BYTES = 1000;

test('committed pages are copied into the database file by the checkpoint thread, before any close', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-checkpoint-'));
  const file = join(dir, 'herald.db');
  const db = new SqliteDatabase(file);
  try {
    const before = statSync(file).size;
    db.tx(() => {
      db.q('CREATE TABLE filler (x TEXT NOT NULL)').run();
      for (let i = 0; i < ROWS; i++) db.q('INSERT INTO filler (x) VALUES (?)').run('x'.repeat(ROW_BYTES));
    });
    // The rows are in the WAL now; the file grows only when a checkpoint copies them into it.
    const wanted = before + 0.8 * ROWS * ROW_BYTES;
    await eventually(
      async () => (statSync(file).size >= wanted ? true : undefined),
      10_000,
      `herald.db to reach ${wanted} bytes (a checkpoint copies the WAL into it)`,
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
