import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { storeConformance } from './conformance.ts';
import { mediaJobsConformance } from './media-jobs-conformance.ts';

const open = async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), 'herald-store-')), 'herald.db'));
storeConformance('sqlite', open);
mediaJobsConformance('sqlite', open);
