/**
 * The embedded store: one SQLite file, owned by one process. Opening it gives each part of the store (ports.ts), the
 * queue (queue/sqlite.ts, through which the operations change deliveries) and the claims sharing this process's
 * leases (leases.ts), as only this process ever holds one.
 */
import { LeaseTokens } from '../../domain/ids.ts';
import { DEFAULT_FAILING, type FailingPolicy } from '../../domain/operational-events.ts';
import { SqliteCatalog, writeSetting } from '../catalog/sqlite.ts';
import { SqliteClaims } from '../claim/sqlite.ts';
import { SqliteDeliveryLog } from '../delivery-log/sqlite.ts';
import { SqliteEngineRepeats } from '../engine-repeats/sqlite.ts';
import { SqliteEvents } from '../events/sqlite.ts';
import { SqliteHealth } from '../health/sqlite.ts';
import { SqliteLidPhones } from '../lid-phones/sqlite.ts';
import { SqliteMediaJobs } from '../media-jobs/sqlite.ts';
import { SqliteOutcomes } from '../outcome/sqlite.ts';
import { SqlitePortalLinks } from '../portal-links/sqlite.ts';
import type { Store } from '../ports.ts';
import { SqliteQueue } from '../queue/sqlite.ts';
import { SqliteRetention } from '../retention/sqlite.ts';
import { SqliteSources } from '../sources/sqlite.ts';
import { SqliteDatabase } from '../sqlite/database.ts';
import { Leases } from '../sqlite/leases.ts';
import { SqliteWebhooks } from '../webhooks/sqlite.ts';

export function openSqliteStore(file: string, failing: FailingPolicy = DEFAULT_FAILING): Store {
  const db = new SqliteDatabase(file);
  const leases = new Leases();
  const tokens = new LeaseTokens();
  // The life of every delivery, which the operations below change only through it.
  const queue = new SqliteQueue(db, leases);
  return {
    catalog: new SqliteCatalog(db),
    webhooks: new SqliteWebhooks(queue),
    health: new SqliteHealth(db),
    events: new SqliteEvents(queue, tokens),
    claims: new SqliteClaims(db, leases, tokens),
    outcomes: new SqliteOutcomes(queue, failing),
    mediaJobs: new SqliteMediaJobs(queue),
    retention: new SqliteRetention(db),
    log: new SqliteDeliveryLog(queue),
    engineRepeats: new SqliteEngineRepeats(db),
    portalLinks: new SqlitePortalLinks(db),
    sources: new SqliteSources(db),
    lidPhones: new SqliteLidPhones(db),
    listenForWork: async (wake) => db.listen(wake),
    close: () => db.close(),
    async ping({ write = false } = {}) {
      db.q('SELECT 1').get();
      // A row rewritten and flushed: a full disk fails it as it fails every other write.
      if (write) await db.durableTx(() => writeSetting(db, 'write_probe', String(Date.now())));
    },
  };
}
