import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { resolveAdminKey } from './admin-key.ts';
import { buildHealthServer } from './api/health-server.ts';
import { buildServer, VERSION } from './api/server.ts';
import type { Config } from './config.ts';
import { Dispatcher } from './delivery/dispatcher.ts';
import { handingOff } from './delivery/hand-off.ts';
import { ThreadFeed } from './delivery/thread-feed.ts';
import { type Clock, systemClock } from './domain/clock.ts';
import { linkKey } from './domain/media-link.ts';
import { redactForeignUrl } from './domain/redact-url.ts';
import type { SecretBox } from './domain/secret-box.ts';
import { RetentionSweeper } from './maintenance/retention.ts';
import { EngineFetch } from './media/engine-fetch.ts';
import { Media } from './media/media.ts';
import { MediaJobs } from './media/media-jobs.ts';
import { openMediaStore, spoolDir } from './media/open-media-store.ts';
import { MediaSweeper } from './media/sweeper.ts';
import { HeraldMetrics } from './metrics/metrics.ts';
import { AddressAllowList } from './net/address-allow-list.ts';
import type { DestinationPolicy, Lookup } from './net/destination.ts';
import { secureDataDir } from './private-files.ts';
import { openSecretBox } from './secret-key.ts';
import { SourceRunner } from './sources/runner.ts';
import { openStore } from './store/open/store.ts';
import type { Store } from './store/ports.ts';
import { AttemptSpans } from './telemetry/attempt-spans.ts';
import { Tracing } from './telemetry/tracing.ts';

export interface Herald {
  url: string;
  server: FastifyInstance;
  store: Store;
  dispatcher: Dispatcher;
  media: Media;
  mediaSweeper: MediaSweeper;
  retention: RetentionSweeper;
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
  /** Resolves destination host names (default: the system's dns.lookup); tests rebind names with it. */
  resolve?: Lookup;
  /** all (default), api (API and session page) or worker (delivery; /healthz and /readyz only). */
  role?: Role;
}

/** Attempts running at once in a process: a hanging receiver holds only its own webhook's cap of them. */
const MAX_IN_FLIGHT = 512;
/** The lease outlives the delivery timeout, so it only runs out when its holder is gone. */
const LEASE_MARGIN_MS = 5000;
/** A media job's lease beyond the download's own timeout: the time to write the file to the media store. */
const MEDIA_LEASE_MARGIN_MS = 10_000;
/** A graceful stop waits this long past the delivery timeout for in-flight attempts, then releases their leases. */
export const STOP_MARGIN_MS = 1000;

export async function startHerald(config: Config, options: HeraldOptions = {}): Promise<Herald> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? pino({ level: config.logLevel });
  const role = options.role ?? 'all';
  // Before the store opens: SQLite gives new -wal and -shm files the database file's mode.
  secureDataDir(config.dataDir, logger);
  const { store, availability } = await openStore(config, clock, logger);
  let secretBox: SecretBox;
  try {
    secretBox = await openSecretBox(config, store);
  } catch (err) {
    await store.close();
    throw err;
  }
  const { hash: adminKeyHash, generated } = await resolveAdminKey(store, config.adminApiKey);
  await store.webhooks.setOperator(
    config.operator && {
      destination_url: config.operator.url,
      secret_sealed: config.operator.secret === null ? null : secretBox.seal(config.operator.secret),
    },
    clock(),
  );

  // Off (null) without an OTLP endpoint: no SDK, no span, no traceparent sent.
  const tracing = config.tracing && new Tracing(config.tracing, VERSION, logger);
  const spans = tracing && new AttemptSpans(tracing);
  if (config.tracing) {
    const { protocol, sampler } = config.tracing;
    const url = redactForeignUrl(config.tracing.url);
    logger.info({ url, protocol, sampler }, `traces: OpenTelemetry spans go to ${url}`);
  }
  const destinations: DestinationPolicy = {
    allowPrivate: config.allowPrivateDestinations,
    allow: new AddressAllowList(config.allowedDestinationCidrs),
    lookup: options.resolve,
  };
  const metrics = new HeraldMetrics({
    queueStats: () => store.claims.queueStats(clock()),
    inFlight: () => dispatcher.inFlight(),
    webhookHealth: () => store.health.webhookHealth(null, clock()),
    now: clock,
  });
  const sender = new ThreadFeed({
    timeoutMs: config.deliveryTimeoutMs,
    destinations,
    secretBox,
    userAgent: `Herald/${VERSION}`,
    clock,
    logger,
    maxRunning: MAX_IN_FLIGHT,
    spans,
  });
  const dispatcher = new Dispatcher({
    store,
    sender,
    rules: { schedule: config.retrySchedule, maxRetryAfterS: config.maxRetryAfterS },
    clock,
    logger,
    leaseMs: config.deliveryTimeoutMs + LEASE_MARGIN_MS,
    maxInFlight: MAX_IN_FLIGHT,
    observer: metrics,
    spans,
  });
  // PUBLIC_URL, or else the address bound below (known only after listen when PORT is 0).
  let publicUrl = config.publicUrl ?? '';
  const mediaStore = await openMediaStore(config.mediaStore, config.dataDir);
  const engineFetch = new EngineFetch({
    prefixes: config.engineMediaPrefixes,
    lookup: options.resolve,
    headers: config.engineMediaHeaders,
    timeoutMs: config.deliveryTimeoutMs,
    maxBytes: config.mediaMaxBytes,
    spoolDir: spoolDir(config.dataDir),
  });
  const media = new Media({
    store: mediaStore,
    engineFetch,
    linkKey: linkKey(secretBox),
    ttlMs: config.mediaTtlMs,
    maxBytes: config.mediaMaxBytes,
    spoolDir: spoolDir(config.dataDir),
    baseUrl: () => publicUrl,
    clock,
  });
  const mediaSweeper = new MediaSweeper({
    media: mediaStore,
    spoolDir: spoolDir(config.dataDir),
    clock,
    logger,
  });
  // Where events go in, for the API and the sources alike.
  const events = role === 'all' ? handingOff(store.events, dispatcher) : store.events;
  // A worker serves /healthz, /readyz and /metrics, so that orchestrators can probe and scrape it like any other process.
  const server =
    role === 'worker'
      ? await buildHealthServer({ store, availability, metrics, clock, config }, logger, adminKeyHash)
      : await buildServer(
          {
            config,
            store,
            availability,
            clock,
            secretBox,
            destinations,
            media,
            metrics,
            // Fresh deliveries the dispatcher can take at once go to it from ingest, without a claim.
            events,
            publicUrl: () => publicUrl,
            tracing,
          },
          logger,
          adminKeyHash,
        );
  // Fastify announces each address it listens on at info, which would come before `herald serve`'s banner and say
  // the same: quiet while it listens; serve logs one line after the banner instead.
  const level = server.log.level;
  server.log.level = 'warn';
  try {
    await server.listen({ port: config.port, host: config.host });
  } finally {
    server.log.level = level;
  }
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  publicUrl ||= url;
  const mediaJobs = new MediaJobs({
    store,
    media,
    clock,
    logger,
    // Longer than a download may take, and a write to the media store after it.
    leaseMs: config.deliveryTimeoutMs + MEDIA_LEASE_MARGIN_MS,
    observer: metrics,
    tracing,
  });
  if (role !== 'api') {
    await store.listenForWork((work) => {
      if (work !== 'media') dispatcher.wake();
      if (work !== 'deliveries') mediaJobs.wake();
    });
    mediaJobs.start();
    // Started now, not at the first attempt, which would wait for the thread to load.
    sender.start();
    dispatcher.start();
  }
  // Uploads land where the API runs; retention goes with delivery. Several sweepers at once are harmless.
  if (role !== 'worker') mediaSweeper.start();
  const retention = new RetentionSweeper({ store, clock, retentionDays: config.retentionDays, logger });
  if (role !== 'api') retention.start();
  // Sources are ingest: consumed where the API runs, by every such process.
  const sources = new SourceRunner({
    ctx: { config, store, clock, media, events, metrics, tracing },
    secretBox,
    logger,
    observer: metrics.sources,
  });
  if (role !== 'worker') sources.start();

  return {
    url,
    server,
    store,
    dispatcher,
    media,
    mediaSweeper,
    retention,
    generatedAdminKey: generated,
    // No new requests and no new claims; answers under way and attempts in flight finish, then the store closes.
    async close() {
      // First: what a source holds unacknowledged goes back to its broker while the store is still open.
      await sources.stop();
      await Promise.all([retention.stop(), mediaSweeper.stop()]);
      await Promise.all([
        server.close(),
        dispatcher.stop(config.deliveryTimeoutMs + STOP_MARGIN_MS),
        mediaJobs.stop(),
      ]);
      await Promise.all([mediaStore.close(), engineFetch.close()]);
      await sender.close();
      await store.close();
      // Last: the spans of the attempts just finished go out too.
      await tracing?.shutdown();
    },
  };
}

/** The store the configuration names (the herald command's maintenance tasks open it too). */
export async function createStore(config: Config): Promise<Store> {
  return (await openStore(config, systemClock, null)).store;
}
