/** The composition root: config → store → keys → dispatcher → API. Everything else receives what it needs. */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { hashKey } from './api/auth.ts';
import { buildHealthServer } from './api/health-server.ts';
import { buildServer, VERSION } from './api/server.ts';
import type { Config } from './config.ts';
import { Dispatcher } from './delivery/dispatcher.ts';
import { Sender } from './delivery/sender.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { randomToken } from './domain/ids.ts';
import { SecretBox } from './domain/secret-box.ts';
import { PostgresStore } from './store/postgres/postgres-store.ts';
import { SqliteStore } from './store/sqlite/sqlite-store.ts';
import type { Store } from './store/store.ts';

export interface Herald {
  url: string;
  server: FastifyInstance;
  store: Store;
  dispatcher: Dispatcher;
  /** Set only on the first start without ADMIN_API_KEY: the generated key, to be shown once. */
  generatedAdminKey: string | null;
  close(): Promise<void>;
}

/** What a process does: `all` (API, session page, dispatcher), `api` (no delivery) or `worker` (delivery only). */
export const ROLES = ['all', 'api', 'worker'] as const;
export type Role = (typeof ROLES)[number];

export interface HeraldOptions {
  clock?: Clock;
  logger?: Logger;
  role?: Role;
}

/** The lease outlives the delivery timeout, so it only runs out when its holder is gone. */
const LEASE_MARGIN_MS = 5000;

export async function startHerald(config: Config, options: HeraldOptions = {}): Promise<Herald> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.logLevel });
  const role = options.role ?? 'all';
  const store: Store = config.databaseUrl
    ? await PostgresStore.open(config.databaseUrl)
    : new SqliteStore(join(config.dataDir, 'herald.db'));
  const secretKey = config.secretKey ?? loadOrCreateKeyFile(config.dataDir);
  if (config.databaseUrl) await checkSharedSecretKey(store, secretKey);
  const secretBox = new SecretBox(secretKey);
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
  // An api process wakes no dispatcher of its own: the store's NOTIFY reaches the workers.
  const onWork = role === 'all' ? () => dispatcher.wake() : () => {};
  // A worker serves /healthz and /readyz only, so that orchestrators can probe it like any other process.
  const server =
    role === 'worker'
      ? await buildHealthServer({ store }, logger)
      : await buildServer({ config, store, clock, secretBox, onWork }, logger, adminKeyHash);
  await server.listen({ port: config.port, host: config.host });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  if (role !== 'api') {
    await store.listenForWork?.(() => dispatcher.wake());
    dispatcher.start();
  }

  return {
    url: `http://${host}:${port}`,
    server,
    store,
    dispatcher,
    generatedAdminKey: generated,
    async close() {
      await server.close();
      await dispatcher.stop();
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

/**
 * Every process on one shared database must seal and open signing secrets with the same key: the first to start
 * records a fingerprint of its key, and a process with another key refuses to start instead of failing deliveries.
 */
async function checkSharedSecretKey(store: Store, key: Buffer): Promise<void> {
  const id = createHash('sha256').update('herald secret key id\0').update(key).digest('hex').slice(0, 32);
  if (!(await store.getSetting('secret_key_id'))) await store.setSetting('secret_key_id', id);
  if ((await store.getSetting('secret_key_id')) !== id) {
    await store.close();
    throw new Error(
      'SECRET_KEY: differs from the key of the other processes on this database; every process must use the same SECRET_KEY',
    );
  }
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
