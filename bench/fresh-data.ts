/**
 * Fresh data for one Herald of the bench: a temp DATA_DIR, and on PostgreSQL a scratch schema of its own (a run
 * must not start on the rows, or the key fingerprint, that an earlier run left in the database). Both go afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FreshData {
  dataDir: string;
  /** The store's URL pointed at the scratch schema, or null for embedded SQLite. */
  databaseUrl: string | null;
  remove(): Promise<void>;
}

export async function freshData(databaseUrl: string | null): Promise<FreshData> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (!databaseUrl) return { dataDir, databaseUrl: null, remove: async () => removeDir() };
  // The schema helpers read DATABASE_URL when they load: set it first, then load them.
  process.env.DATABASE_URL ??= databaseUrl;
  const { scratchSchema, dropSchema } = await import('../test/support/postgres.ts');
  const { schema, url } = await scratchSchema();
  return {
    dataDir,
    databaseUrl: url,
    async remove() {
      removeDir();
      await dropSchema(schema);
    },
  };
}
