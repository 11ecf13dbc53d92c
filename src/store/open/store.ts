/** Opening the store the configuration names, guarded (availability.ts); the only place a dialect is chosen. */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../domain/clock.ts';
import type { FailingPolicy } from '../../domain/operational-events.ts';
import { type Availability, guardStore } from '../availability.ts';
import type { Store } from '../ports.ts';
import { sqliteUnavailable } from '../sqlite/database.ts';
import { openSqliteStore } from './sqlite.ts';

export async function openStore(
  where: { dataDir: string; databaseUrl: string | null; failing?: FailingPolicy },
  clock: Clock,
  logger: Logger | null,
): Promise<{ store: Store; availability: Availability }> {
  if (!where.databaseUrl) {
    return guardStore(
      openSqliteStore(join(where.dataDir, 'herald.db'), where.failing),
      sqliteUnavailable,
      clock,
      logger,
    );
  }
  // Loaded only when configured, like the S3 media adapter: an embedded Herald need not carry the client.
  const { openPostgresStore, postgresUnavailable } = await import('./postgres.ts');
  return guardStore(
    await openPostgresStore(where.databaseUrl, where.failing),
    postgresUnavailable,
    clock,
    logger,
  );
}
