/**
 * A source's messages into the store, exactly as the HTTP endpoints take events (ingestPublications: the same
 * validation, idempotency by event_id and engine dedupe). Messages waiting are taken in batches, one ingest per
 * instance; each message's promise settles only once its fate is durable: `ack` once its event is stored, `park`
 * once it is stored as parked (it can never be ingested: not JSON, invalid, no such instance). When Herald's own
 * store fails, nothing settles: the batch is tried again with backoff, the messages held unacknowledged, until it
 * succeeds or the source stops (`release`: the broker delivers them again).
 */
import type { Logger } from 'pino';
import type { ApiContext } from '../api/context.ts';
import { HttpError } from '../api/errors.ts';
import { ingestPublications, type Publication } from '../api/publish.ts';
import type { SourceEvent } from '../domain/source-message.ts';
import type { Instance } from '../domain/types.ts';
import type { SourceObserver } from '../metrics/source-metrics.ts';
import type { Source, SourceCounts } from '../store/records.ts';
import type { TakenMessage, Verdict } from './consumer.ts';
import { publishOptions, SOURCE_FORMATS } from './formats.ts';

export type IngestContext = Pick<ApiContext, 'clock' | 'store' | 'media' | 'events' | 'config'> & {
  metrics?: ApiContext['metrics'];
};

const BATCH = 500;
const INGESTS_AT_ONCE = 3;
const PARKED_BODY_BYTES = 4096;
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 10_000;

interface Waiting {
  message: TakenMessage;
  settle: (v: Verdict) => void;
}
interface Ready {
  w: Waiting;
  instanceId: string;
  event: SourceEvent;
  eventId: string;
}

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

  constructor(ctx: IngestContext, source: Source, observer: SourceObserver | null, logger: Logger) {
    this.#ctx = ctx;
    this.#source = source;
    this.#observer = observer;
    this.#logger = logger;
  }

  take = (message: TakenMessage): Promise<Verdict> => {
    if (this.#stopping.signal.aborted) return Promise.resolve('release');
    return new Promise((settle) => {
      this.#waiting.push({ message, settle });
      if (this.#draining.size < INGESTS_AT_ONCE) {
        const drain: Promise<void> = this.#drain().finally(() => this.#draining.delete(drain));
        this.#draining.add(drain);
      }
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
    const instances = await this.#retrying(batch.length, () => this.#ctx.store.catalog.listInstances());
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
      if (seen.has(read.eventId) || this.#inFlight.has(read.eventId)) {
        later.push(w);
        continue;
      }
      seen.add(read.eventId);
      this.#inFlight.add(read.eventId);
      mine.push(read.eventId);
      const group = groups.get(read.instanceId);
      if (group) group.push({ w, ...read });
      else groups.set(read.instanceId, [{ w, ...read }]);
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

  #read(
    m: TakenMessage,
    format: (typeof SOURCE_FORMATS)[string],
    instances: Instance[],
  ): { reason: string } | Omit<Ready, 'w'> {
    if (m.unreadable) return { reason: m.unreadable };
    if (format.engine && m.body.length > this.#ctx.config.engineMaxBodyBytes)
      return { reason: `larger than ENGINE_MAX_BODY_BYTES (${this.#ctx.config.engineMaxBodyBytes} bytes)` };
    let body: unknown;
    try {
      body = JSON.parse(m.body.toString('utf8'));
    } catch (err) {
      return { reason: `not JSON: ${(err as Error).message}` };
    }
    const read = format.read(body, this.#source.source_id, m.brokerId ?? '');
    if ('errors' in read) return { reason: HttpError.invalid(read.errors).message };
    const event = read.event;
    let instance: Instance | undefined;
    if (this.#source.instance_id)
      instance = instances.find((i) => i.instance_id === this.#source.instance_id);
    else if (event.instance === null)
      return { reason: 'names no instance (instance_id, or the session), and the source has none' };
    else if ('id' in event.instance) {
      const id = event.instance.id;
      instance = instances.find((i) => i.instance_id === id);
      if (!instance) return { reason: `no instance ${id}` };
    } else {
      const name = event.instance.name;
      const named = instances.filter((i) => i.name === name);
      if (named.length !== 1)
        return {
          reason: named.length ? `several instances are named "${name}"` : `no instance named "${name}"`,
        };
      instance = named[0];
    }
    if (!instance) return { reason: `no instance ${this.#source.instance_id}` };
    return { instanceId: instance.instance_id, event, eventId: event.eventId(instance.instance_id) };
  }

  async #ingestGroup(instanceId: string, group: Ready[], engine: boolean): Promise<void> {
    const options = publishOptions(SOURCE_FORMATS[this.#source.format], this.#ctx.config.engineDedupeMs);
    const items: Publication[] = group.map(({ event: e, eventId }) => ({
      event: e.event,
      payload: e.payload,
      event_id: eventId,
      timestamp: e.timestamp,
      order_id: e.order_id ?? undefined,
      sessionPhone: e.sessionPhone,
    }));
    const refusal: { err: HttpError | null } = { err: null };
    const results = await this.#retrying(group.length, async () => {
      try {
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
    let ingested = 0;
    let duplicates = 0;
    results.forEach((r, i) => {
      if (r.duplicate || r.replay) duplicates++;
      else ingested++;
      group[i].w.settle('ack');
    });
    this.counts.ingested += ingested;
    this.counts.duplicates += duplicates;
    this.#observer?.sourceMessages(this.#source.source_id, 'ingested', ingested);
    this.#observer?.sourceMessages(this.#source.source_id, 'duplicate', duplicates);
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
    w.settle('park');
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
