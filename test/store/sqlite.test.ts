import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { storeConformance } from './conformance.ts';

storeConformance(
  'sqlite',
  async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), 'herald-store-')), 'herald.db')),
);
