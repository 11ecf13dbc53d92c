/**
 * What a broker's consumer of a source does, whichever broker: it hands each message it takes to `take`, and tells
 * the broker what `take` answers only once it has answered (the event is stored, or the message parked). `release`
 * leaves the message unacknowledged (Herald is stopping), for the broker to deliver again.
 */
import type { SourceState } from '../store/records.ts';

export interface TakenMessage {
  /** The broker's id for the message: AMQP message_id, JetStream stream sequence, Redis entry id (null: none). */
  brokerId: string | null;
  body: Buffer;
  /** The body as the client library already parsed it (rabbitmq-client parses application/json): not parsed again. */
  json?: unknown;
  /** Why the message cannot be read at all (it is parked with this reason). */
  unreadable?: string;
  /** The W3C traceparent it carries (an AMQP or NATS header, a Redis entry's field): its span continues it. */
  traceparent?: string | null;
}

export type Verdict = 'ack' | 'park' | 'release';

export interface ConsumerHooks {
  /** Settles once the message's fate is durable; never rejects. */
  take(message: TakenMessage): Promise<Verdict>;
  state(state: SourceState, lastError: string | null): void;
}

export interface ConsumerOptions {
  /** Unacknowledged messages at most (SOURCE_PREFETCH). */
  prefetch: number;
  /** This process's name among a group's consumers (Redis). */
  consumerName: string;
  /** Entries another consumer left unacknowledged this long are taken over (Redis). */
  reclaimMs: number;
}

export interface SourceConsumer {
  /** Stops taking messages; those taken and not yet answered are left to the broker. */
  stop(): Promise<void>;
}

/** A small counter that lets a loop wait until fewer than `limit` messages are unanswered. */
export class Window {
  readonly limit: number;
  #open = 0;
  #waiters: (() => void)[] = [];

  constructor(limit: number) {
    this.limit = limit;
  }

  get open(): number {
    return this.#open;
  }

  get room(): number {
    return Math.max(0, this.limit - this.#open);
  }

  add(n = 1): void {
    this.#open += n;
  }

  done(): void {
    this.#open--;
    for (const w of this.#waiters.splice(0)) w();
  }

  /** Resolves once every message taken is answered. */
  async drained(): Promise<void> {
    while (this.#open > 0) await new Promise<void>((r) => this.#waiters.push(r));
  }

  /**
   * Resolves when there is room for at least half the limit (at once if there is), so that a read behind a backlog
   * takes a batch, not the one message just acknowledged, and the store gets batches to write. With no backlog (the
   * last read took all there was), any room will do: the window still fills while nothing is answered (the store
   * is away), one message at a time if they come one at a time.
   */
  async roomy(backlog: boolean): Promise<void> {
    const least = backlog ? Math.max(1, Math.floor(this.limit / 2)) : 1;
    while (this.room < least) await new Promise<void>((r) => this.#waiters.push(r));
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * What is answered within one turn of the event loop, handed to `flush` together: a batch's messages settle at once
 * when it is stored, and one broker call then acknowledges them all instead of one call (and one write) each.
 */
export class Answers<T> {
  readonly #flush: (items: T[]) => void;
  #items: T[] = [];
  #scheduled = false;

  constructor(flush: (items: T[]) => void) {
    this.#flush = flush;
  }

  add(item: T): void {
    this.#items.push(item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush(this.#items.splice(0));
    });
  }
}
