/** The composition root: config → store → keys → dispatcher → API. Everything else receives what it needs. */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { hashKey } from './api/auth.ts';
import { buildServer, VERSION } from './api/server.ts';
import type { Config } from './config.ts';
import { Dispatcher } from './delivery/dispatcher.ts';
import { Sender } from './delivery/sender.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { randomToken } from './domain/ids.ts';
import { SecretBox } from './domain/secret-box.ts';
import { RetentionSweeper } from './maintenance/retention.ts';
import { SqliteStore } from './store/sqlite/sqlite-store.ts';
import type { Store } from './store/store.ts';

export interface Herald {
  url: string;
  server: FastifyInstance;
  store: Store;
  dispatcher: Dispatcher;
  retention: RetentionSweeper;
  /** Set only on the first start without ADMIN_API_KEY: the generated key, to be shown once. */
  generatedAdminKey: string | null;
  close(): Promise<void>;
}

export interface HeraldOptions {
  clock?: Clock;
  logger?: Logger;
}

/** The lease outlives the delivery timeout, so it only runs out when its holder is gone. */
const LEASE_MARGIN_MS = 5000;
/** A graceful stop waits this long past the delivery timeout for in-flight attempts, then releases their leases. */
export const STOP_MARGIN_MS = 1000;

export async function startHerald(config: Config, options: HeraldOptions = {}): Promise<Herald> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.logLevel });
  if (config.databaseUrl)
    throw new Error('DATABASE_URL: the PostgreSQL adapter is not available in this version');
  const store: Store = new SqliteStore(join(config.dataDir, 'herald.db'));
  const secretBox = new SecretBox(config.secretKey ?? loadOrCreateKeyFile(config.dataDir));
  const { hash: adminKeyHash, generated } = await adminKey(store, config);

  const sender = new Sender({
    timeoutMs: config.deliveryTimeoutMs,
    allowPrivateDestinations: config.allowPrivateDestinations,
    secretBox,
    userAgent: `Herald/${VERSION}`,
    clock,
  });
  const dispatcher = new Dispatcher({
    store,
    send: (claim) => sender.send(claim),
    rules: { schedule: config.retrySchedule, maxRetryAfterS: config.maxRetryAfterS },
    clock,
    logger,
    leaseMs: config.deliveryTimeoutMs + LEASE_MARGIN_MS,
  });
  const server = await buildServer(
    { config, store, clock, secretBox, onWork: () => dispatcher.wake() },
    logger,
    adminKeyHash,
  );
  await server.listen({ port: config.port, host: config.host });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  dispatcher.start();
  const retention = new RetentionSweeper({ store, clock, retentionDays: config.retentionDays, logger });
  retention.start();

  return {
    url: `http://${host}:${port}`,
    server,
    store,
    dispatcher,
    retention,
    generatedAdminKey: generated,
    // No new requests and no new claims; answers under way and attempts in flight finish, then the store closes.
    async close() {
      await retention.stop();
      await Promise.all([server.close(), dispatcher.stop(config.deliveryTimeoutMs + STOP_MARGIN_MS)]);
      await sender.close();
      await store.close();
    },
  };
}

/** ADMIN_API_KEY when set; otherwise the stored hash, or a new key whose hash is stored and which is shown once. */
async function adminKey(store: Store, config: Config): Promise<{ hash: string; generated: string | null }> {
  if (config.adminApiKey) return { hash: hashKey(config.adminApiKey), generated: null };
  const stored = await store.getSetting('admin_key_hash');
  if (stored) return { hash: stored, generated: null };
  const key = `hk_admin_${randomToken(32)}`;
  await store.setSetting('admin_key_hash', hashKey(key));
  return { hash: hashKey(key), generated: key };
}

/** The key that seals signing secrets when SECRET_KEY is unset: generated once, readable by the owner only. */
function loadOrCreateKeyFile(dataDir: string): Buffer {
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file}: must hold a 32-byte base64 key`);
    return key;
  }
  writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return loadOrCreateKeyFile(dataDir);
}
