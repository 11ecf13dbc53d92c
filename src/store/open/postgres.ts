/**
 * The scale-out store: PostgreSQL, shared by any number of API and worker processes on any number of machines.
 * Opening it connects, migrates (safe when several processes start at once) and gives each part of the store
 * (ports.ts).
 */
import { DEFAULT_FAILING, type FailingPolicy } from '../../domain/operational-events.ts';
import { PostgresCatalog, writeSetting } from '../catalog/postgres.ts';
import { PostgresClaims } from '../claim/postgres.ts';
import { PostgresDeliveryLog } from '../delivery-log/postgres.ts';
import { PostgresEngineRepeats } from '../engine-repeats/postgres.ts';
import { PostgresEvents } from '../events/postgres.ts';
import { PostgresHealth } from '../health/postgres.ts';
import { PostgresLidPhones } from '../lid-phones/postgres.ts';
import { PostgresMediaJobs } from '../media-jobs/postgres.ts';
import { PostgresOutcomes } from '../outcome/postgres.ts';
import { PostgresPortalLinks } from '../portal-links/postgres.ts';
import type { Store } from '../ports.ts';
import { PostgresDatabase } from '../postgres/database.ts';
import { PostgresQueue } from '../queue/postgres.ts';
import { PostgresRetention } from '../retention/postgres.ts';
import { PostgresSources } from '../sources/postgres.ts';
import { PostgresWebhooks } from '../webhooks/postgres.ts';

export { postgresUnavailable } from '../postgres/connection.ts';

export async function openPostgresStore(
  url: string,
  failing: FailingPolicy = DEFAULT_FAILING,
): Promise<Store> {
  const db = await PostgresDatabase.open(url);
  // The life of every delivery, which the operations below change only through it.
  const queue = new PostgresQueue(db);
  return {
    catalog: new PostgresCatalog(db),
    webhooks: new PostgresWebhooks(queue),
    health: new PostgresHealth(db),
    events: new PostgresEvents(queue),
    claims: new PostgresClaims(db),
    outcomes: new PostgresOutcomes(queue, failing),
    mediaJobs: new PostgresMediaJobs(queue),
    retention: new PostgresRetention(db),
    log: new PostgresDeliveryLog(queue),
    engineRepeats: new PostgresEngineRepeats(db),
    portalLinks: new PostgresPortalLinks(db),
    sources: new PostgresSources(db),
    lidPhones: new PostgresLidPhones(db),
    listenForWork: (wake) => db.listen(wake),
    close: () => db.close(),
    async ping({ write = false } = {}) {
      if (write) await writeSetting(db.sql, 'write_probe', String(Date.now()));
      else await db.sql`SELECT 1`;
    },
  };
}
