/**
 * Every source in the store, consumed by this process: each process runs a consumer for each source (the brokers
 * share a source's messages among them), notices sources created, changed or deleted by polling the store, and adds
 * what it counted to the source's counters there, so that they are every process's together. A consumer that cannot
 * be opened (the broker is down) is tried again with backoff.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { SecretBox } from '../domain/secret-box.ts';
import { parseSourceUrl, type SourceTarget, SourceUrlProblem } from '../domain/source-url.ts';
import type { SourceObserver } from '../metrics/source-metrics.ts';
import type { Source, SourceState } from '../store/records.ts';
import { consumeAmqp } from './amqp.ts';
import { type ConsumerHooks, type ConsumerOptions, pause, type SourceConsumer } from './consumer.ts';
import { consumeNats } from './nats.ts';
import { consumeRedis } from './redis.ts';
import { type IngestContext, SourceIngest } from './source-ingest.ts';

const POLL_MS = 1000;

interface Running {
  source: Source;
  ingest: SourceIngest;
  stopping: AbortController;
  consumer: Promise<SourceConsumer | null>;
  state: { state: SourceState; error: string | null } | null;
  /** The state's writes to the store, one after another (see #report). */
  stateWrites: Promise<void>;
}

export interface SourceRunnerOptions {
  ctx: IngestContext;
  secretBox: SecretBox;
  logger: Logger;
  observer: SourceObserver | null;
  pollMs?: number;
}

export class SourceRunner {
  readonly #o: SourceRunnerOptions;
  readonly #running = new Map<string, Running>();
  readonly #stopping = new AbortController();
  readonly #name = `herald-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  #loop: Promise<void> | null = null;

  constructor(options: SourceRunnerOptions) {
    this.#o = options;
  }

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopping.signal.aborted) {
        await this.#sync().catch((err) =>
          this.#o.logger.warn({ err }, 'sources: could not read the sources'),
        );
        await pause(this.#o.pollMs ?? POLL_MS, this.#stopping.signal);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
    await Promise.all([...this.#running.keys()].map((id) => this.#stopOne(id)));
  }

  async #sync(): Promise<void> {
    const sources = await this.#o.ctx.store.sources.listSources();
    const ids = new Set(sources.map((s) => s.source_id));
    for (const id of this.#running.keys()) if (!ids.has(id)) await this.#stopOne(id, true);
    for (const s of sources) {
      const r = this.#running.get(s.source_id);
      if (r && r.source.updated_at !== s.updated_at) await this.#stopOne(s.source_id);
      if (!this.#running.has(s.source_id) && !this.#stopping.signal.aborted) this.#startOne(s);
    }
    await this.#flush();
  }

  async #flush(): Promise<void> {
    for (const r of this.#running.values()) await this.#flushOne(r);
  }

  async #flushOne(r: Running): Promise<void> {
    const c = r.ingest.takeCounts();
    if (c.received === 0 && c.ingested === 0 && c.duplicates === 0 && c.parked === 0) return;
    try {
      await this.#o.ctx.store.sources.addSourceCounts(r.source.source_id, c);
    } catch (err) {
      // Kept for the next flush.
      for (const k of Object.keys(c) as (keyof typeof c)[]) r.ingest.counts[k] += c[k];
      throw err;
    }
  }

  #startOne(source: Source): void {
    const ingest = new SourceIngest(this.#o.ctx, source, this.#o.observer, this.#o.logger);
    const stopping = new AbortController();
    const r: Running = {
      source,
      ingest,
      stopping,
      consumer: Promise.resolve(null),
      state: null,
      stateWrites: Promise.resolve(),
    };
    this.#running.set(source.source_id, r);
    const hooks: ConsumerHooks = {
      take: ingest.take,
      state: (state, error) => this.#report(r, state, error),
    };
    const options: ConsumerOptions = {
      prefetch: this.#o.ctx.config.sourcePrefetch,
      consumerName: this.#name,
      reclaimMs: this.#o.ctx.config.sourceReclaimMs,
    };
    r.consumer = (async () => {
      const raw = source.url_sealed ? this.#o.secretBox.open(source.url_sealed) : source.url;
      const target = parseSourceUrl(raw);
      if (target instanceof SourceUrlProblem) {
        this.#report(r, 'failed', target.message);
        return null;
      }
      this.#report(r, 'connecting', null);
      for (let attempt = 0; !stopping.signal.aborted; attempt++) {
        try {
          return await consume(target, hooks, options);
        } catch (err) {
          this.#report(
            r,
            attempt === 0 ? 'connecting' : 'reconnecting',
            (err as Error)?.message ?? String(err),
          );
          await pause(Math.min(10_000, 250 * 2 ** attempt), stopping.signal);
        }
      }
      return null;
    })();
  }

  async #stopOne(id: string, deleted = false): Promise<void> {
    const r = this.#running.get(id);
    if (!r) return;
    this.#running.delete(id);
    r.stopping.abort();
    // Unanswered messages are released before the consumer closes, so its close does not wait on them.
    const ingestStopped = r.ingest.stop();
    const consumer = await r.consumer;
    await ingestStopped;
    await consumer?.stop();
    if (deleted) this.#o.observer?.sourceGone(id);
    else await this.#flushOne(r).catch(() => {});
  }

  #report(r: Running, state: SourceState, error: string | null): void {
    if (r.state?.state === state && r.state.error === error) return;
    if (!this.#running.has(r.source.source_id) || r.stopping.signal.aborted) return;
    r.state = { state, error };
    this.#o.observer?.sourceUp(r.source.source_id, state === 'consuming');
    if (error) this.#o.logger.warn({ source_id: r.source.source_id, state }, `source ${state}: ${error}`);
    // Each write waits for the one before: two at once may commit in either order on PostgreSQL's pool, and a
    // 'connecting' committed after 'consuming' left the source shown as connecting while it consumed.
    const at = this.#o.ctx.clock();
    r.stateWrites = r.stateWrites.then(() =>
      this.#o.ctx.store.sources.setSourceState(r.source.source_id, state, error, at).catch(() => {}),
    );
  }
}

function consume(t: SourceTarget, hooks: ConsumerHooks, options: ConsumerOptions): Promise<SourceConsumer> {
  if (t.kind === 'amqp') return consumeAmqp(t, hooks, options);
  if (t.kind === 'nats') return consumeNats(t, hooks, options);
  return consumeRedis(t, hooks, options);
}
