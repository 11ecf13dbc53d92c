import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { catalogConformance } from './catalog-conformance.ts';
import { intakeConformance } from './intake-conformance.ts';
import { deliveryLogConformance } from './log-conformance.ts';
import { mediaJobsConformance } from './media-jobs-conformance.ts';
import { queueConformance } from './queue-conformance.ts';
import { routingConformance } from './routing-conformance.ts';

const open = async () => new SqliteStore(join(mkdtempSync(join(tmpdir(), 'herald-store-')), 'herald.db'));
catalogConformance('sqlite', open);
queueConformance('sqlite', open);
intakeConformance('sqlite', open);
routingConformance('sqlite', open);
deliveryLogConformance('sqlite', open);
mediaJobsConformance('sqlite', open);
