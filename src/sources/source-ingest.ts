/**
 * A source's messages into the store, exactly as the HTTP endpoints take events (ingestPublications: the same
 * validation, idempotency by event_id and engine dedupe). Messages waiting are taken in batches, one ingest per
 * instance; each message's promise settles only once its fate is durable: `ack` once all its events are stored (an
 * Evolution body may be several), `park` once it is stored as parked (it can never be ingested: not JSON, invalid,
 * no such instance). When Herald's own store fails, nothing settles: the batch is tried again with backoff, the
 * messages held unacknowledged, until it succeeds or the source stops (`release`: the broker delivers them again).
 * With tracing on, each message has a CONSUMER span from its taking to its answer, and its events carry that trace.
 */
import type { Logger } from 'pino';
import type { ApiContext } from '../api/context.ts';
import { withInlineFile } from '../api/engine-ingest.ts';
import { HttpError } from '../api/errors.ts';
import { ingestPublications, type Publication } from '../api/publish.ts';
import type { SourceEvents } from '../domain/source-message.ts';
import { parseSourceUrl, SourceUrlProblem } from '../domain/source-url.ts';
import type { Instance } from '../domain/types.ts';
import type { SourceObserver } from '../metrics/source-metrics.ts';
import type { Source, SourceCounts } from '../store/records.ts';
import { type SourceMessage as SpanOf, withSourceSpan } from '../telemetry/source-span.ts';
import type { TakenMessage, Verdict } from './consumer.ts';
import { publishOptions, SOURCE_FORMATS } from './formats.ts';

export type IngestContext = Pick<ApiContext, 'clock' | 'store' | 'media' | 'events' | 'config'> & {
  metrics?: ApiContext['metrics'];
  tracing?: ApiContext['tracing'];
};

const BATCH = 500;
const INGESTS_AT_ONCE = 3;
const PARKED_BODY_BYTES = 4096;
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 10_000;

interface Waiting {
  message: TakenMessage;
  /** The trace its events carry: its span's (tracing on), else null. */
  trace: string | null;
  settle: (v: Verdict, reason?: string) => void;
}
interface Ready {
  w: Waiting;
  instanceId: string;
  read: SourceEvents;
  /** Its events, their inline file stored: kept, so that a batch tried again does not store it again. */
  items: Publication[] | null;
}

/** How a parked message ends its span: with the reason. */
class Parked extends Error {}

export class SourceIngest {
  readonly #ctx: IngestContext;
  readonly #source: Source;
  readonly #observer: SourceObserver | null;
  readonly #logger: Logger;
  readonly #waiting: Waiting[] = [];
  readonly #stopping = new AbortController();
  /** The batches being ingested now, at most INGESTS_AT_ONCE, as the HTTP ingest has several requests in flight. */
  readonly #draining = new Set<Promise<void>>();
  /** The event ids of those batches: one event_id is never in two ingests at once. */
  readonly #inFlight = new Set<string>();
  /** Counted since the last flush to the store. */
  counts: SourceCounts = { received: 0, ingested: 0, duplicates: 0, parked: 0 };

  readonly #span: Omit<SpanOf, 'traceparent'>;

  constructor(ctx: IngestContext, source: Source, observer: SourceObserver | null, logger: Logger) {
    this.#ctx = ctx;
    this.#source = source;
    this.#observer = observer;
    this.#logger = logger;
    this.#span = spanOf(source);
  }

  take = (message: TakenMessage): Promise<Verdict> => {
    if (this.#stopping.signal.aborted) return Promise.resolve('release');
    const span = { ...this.#span, traceparent: message.traceparent ?? null };
    return withSourceSpan(
      this.#ctx.tracing,
      span,
      (trace) =>
        new Promise<Verdict>((resolve, reject) => {
          const settle = (v: Verdict, reason?: string) =>
            v === 'park' ? reject(new Parked(reason)) : resolve(v);
          this.#waiting.push({ message, trace, settle });
          if (this.#draining.size < INGESTS_AT_ONCE) {
            const drain: Promise<void> = this.#drain().finally(() => this.#draining.delete(drain));
            this.#draining.add(drain);
          }
        }),
    ).catch((err) => {
      if (err instanceof Parked) return 'park';
      throw err;
    });
  };

  /** Releases whatever waits or is being retried; what is being written finishes first. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await Promise.all(this.#draining);
    for (const w of this.#waiting.splice(0)) w.settle('release');
  }

  /** Takes and zeroes what was counted since the last call. */
  takeCounts(): SourceCounts {
    const c = this.counts;
    this.counts = { received: 0, ingested: 0, duplicates: 0, parked: 0 };
    return c;
  }

  async #drain(): Promise<void> {
    // Let the messages of one broker read gather.
    await new Promise((r) => setImmediate(r));
    while (this.#waiting.length > 0 && !this.#stopping.signal.aborted) {
      const batch = this.#waiting.splice(0, BATCH);
      this.counts.received += batch.length;
      await this.#ingestBatch(batch);
    }
  }

  async #ingestBatch(batch: Waiting[]): Promise<void> {
    const format = SOURCE_FORMATS[this.#source.format];
    const instances = await this.#retrying(batch.length, () => this.#instances());
    if (instances === null) return this.#release(batch);
    const groups = new Map<string, Ready[]>();
    const seen = new Set<string>();
    const later: Waiting[] = [];
    const mine: string[] = [];
    const parks: [Waiting, string][] = [];
    for (const w of batch) {
      const read = this.#read(w.message, format, instances);
      if ('reason' in read) {
        parks.push([w, read.reason]);
        continue;
      }
      // An event_id twice in one ingest, or in another ingest under way, is left for the next round, where it is
      // the stored one's duplicate.
      const ids = read.read.events.map((e) => e.event_id);
      if (ids.some((id) => seen.has(id) || this.#inFlight.has(id))) {
        later.push(w);
        continue;
      }
      for (const id of ids) {
        seen.add(id);
        this.#inFlight.add(id);
        mine.push(id);
      }
      const ready: Ready = { w, ...read, items: null };
      const group = groups.get(read.instanceId);
      if (group) group.push(ready);
      else groups.set(read.instanceId, [ready]);
    }
    this.#waiting.unshift(...later);
    this.counts.received -= later.length;
    try {
      for (const [w, reason] of parks) await this.#park(w, reason);
      for (const [instanceId, group] of groups) await this.#ingestGroup(instanceId, group, format.engine);
      // Only messages whose event another ingest is storing now: wait for it rather than spin.
      if (later.length === batch.length) await new Promise((r) => setTimeout(r, 5));
    } finally {
      for (const id of mine) this.#inFlight.delete(id);
    }
  }

  /** The instances the batch's messages may go to: the source's own, or every one (a body names its instance). */
  async #instances(): Promise<Instance[]> {
    const fixed = this.#source.instance_id;
    if (!fixed) return this.#ctx.store.catalog.listInstances();
    const instance = await this.#ctx.store.catalog.getInstance(fixed);
    return instance ? [instance] : [];
  }

  #read(
    m: TakenMessage,
    format: (typeof SOURCE_FORMATS)[string],
    instances: Instance[],
  ): { reason: string } | { instanceId: string; read: SourceEvents } {
    if (m.unreadable) return { reason: m.unreadable };
    if (format.engine && m.body.length > this.#ctx.config.engineMaxBodyBytes)
      return { reason: `larger than ENGINE_MAX_BODY_BYTES (${this.#ctx.config.engineMaxBodyBytes} bytes)` };
    let body: unknown = m.json;
    if (body === undefined)
      try {
        body = JSON.parse(m.body.toString('utf8'));
      } catch (err) {
        return { reason: `not JSON: ${(err as Error).message}` };
      }
    const read = format.read(body, this.#source.source_id, m.brokerId ?? '');
    if ('errors' in read) return { reason: HttpError.invalid(read.errors).message };
    const named = read.message.instance;
    let instance: Instance | undefined;
    if (this.#source.instance_id)
      instance = instances.find((i) => i.instance_id === this.#source.instance_id);
    else if (named === null)
      return {
        reason: 'names no instance (instance_id, the session or the instance), and the source has none',
      };
    else if ('id' in named) {
      const id = named.id;
      instance = instances.find((i) => i.instance_id === id);
      if (!instance) return { reason: `no instance ${id}` };
    } else {
      const name = named.name;
      const those = instances.filter((i) => i.name === name);
      if (those.length !== 1)
        return {
          reason: those.length ? `several instances are named "${name}"` : `no instance named "${name}"`,
        };
      instance = those[0];
    }
    if (!instance) return { reason: `no instance ${this.#source.instance_id}` };
    const events = read.message.at(instance.instance_id);
    if ('errors' in events) return { reason: HttpError.invalid(events.errors).message };
    return { instanceId: instance.instance_id, read: events };
  }

  async #ingestGroup(instanceId: string, group: Ready[], engine: boolean): Promise<void> {
    const options = publishOptions(SOURCE_FORMATS[this.#source.format], this.#ctx);
    const refusal: { err: HttpError | null } = { err: null };
    const results = await this.#retrying(group.length, async () => {
      try {
        const items = await this.#items(instanceId, group);
        return await ingestPublications(this.#ctx, instanceId, items, options);
      } catch (err) {
        if (err instanceof HttpError && err.status < 500) {
          refusal.err = err;
          return null;
        }
        throw err;
      }
    });
    if (results === null && refusal.err === null) return this.#release(group.map((r) => r.w));
    if (results === null) {
      // One of them is refused: each alone, so that only the bad ones are parked.
      if (group.length === 1) return this.#park(group[0].w, (refusal.err as HttpError).message);
      for (const one of group) await this.#ingestGroup(instanceId, [one], engine);
      return;
    }
    // Counted per message: ingested when any of its events is new, a duplicate when every one was stored before.
    let ingested = 0;
    let duplicates = 0;
    let next = 0;
    for (const r of group) {
      const mine = results.slice(next, next + r.read.events.length);
      next += r.read.events.length;
      if (mine.every((e) => e.duplicate || e.replay)) duplicates++;
      else ingested++;
      r.w.settle('ack');
    }
    this.counts.ingested += ingested;
    this.counts.duplicates += duplicates;
    this.#observer?.sourceMessages(this.#source.source_id, 'ingested', ingested);
    this.#observer?.sourceMessages(this.#source.source_id, 'duplicate', duplicates);
  }

  /** The group's events in order, each message's inline file stored (once) and each event with its message's trace. */
  async #items(instanceId: string, group: Ready[]): Promise<Publication[]> {
    const out: Publication[] = [];
    for (const r of group) {
      r.items ??= await withInlineFile(this.#ctx, instanceId, r.read.events, r.read.inline);
      for (const item of r.items) out.push({ ...item, trace: r.w.trace });
    }
    return out;
  }

  async #park(w: Waiting, reason: string): Promise<void> {
    const body = w.message.body
      .subarray(0, PARKED_BODY_BYTES)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
    const parked = await this.#retrying(1, () =>
      this.#ctx.store.sources
        .parkMessage(this.#source.source_id, { parked_at: this.#ctx.clock(), reason, body })
        .then(() => true),
    );
    if (parked === null) return this.#release([w]);
    this.counts.parked++;
    this.#observer?.sourceMessages(this.#source.source_id, 'parked', 1);
    this.#logger.warn(
      { source_id: this.#source.source_id, reason },
      'source message parked: it can never be ingested',
    );
    w.settle('park', reason);
  }

  /** Left to the broker, to be delivered again (and received again, so not counted now). */
  #release(ws: Waiting[]): void {
    this.counts.received -= ws.length;
    for (const w of ws) w.settle('release');
  }

  /** `work` until it succeeds, with backoff; null when the source stops first. Each retry counts `n` retried. */
  async #retrying<T>(n: number, work: () => Promise<T>): Promise<T | null> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (err) {
        if (this.#stopping.signal.aborted) return null;
        this.#observer?.sourceMessages(this.#source.source_id, 'retried', n);
        if (attempt === 0)
          this.#logger.warn(
            { source_id: this.#source.source_id, err },
            'source messages not stored; retrying, not acknowledged',
          );
        const wait = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** attempt);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, wait);
          this.#stopping.signal.addEventListener('abort', () => {
            clearTimeout(t);
            resolve();
          });
        });
        if (this.#stopping.signal.aborted) return null;
      }
    }
  }
}

/** What a message's span says of where it came from: the broker, and the queue or stream it was read from. */
function spanOf(source: Source): Omit<SpanOf, 'traceparent'> {
  const t = parseSourceUrl(source.url);
  if (t instanceof SourceUrlProblem) return { system: 'rabbitmq', source: source.source_id };
  if (t.kind === 'amqp') return { system: 'rabbitmq', source: t.queue };
  if (t.kind === 'nats') return { system: 'nats', source: t.stream };
  return { system: 'redis', source: t.stream };
}
