/**
 * The dispatcher's outcome writes. Outcomes are written in batches of up to a few milliseconds' worth: a write
 * costs mostly per transaction, not per row. Nothing waits on them — the lease holds each delivery meanwhile — but
 * the delivery log, and a claim that could find something new once they are written.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { Outcomes } from '../store/ports.ts';
import type { AttemptResult } from '../store/records.ts';

/** How long an outcome may wait to be written with others. */
const FLUSH_AFTER_MS = 5;

export class OutcomeWriter {
  readonly #store: Pick<Outcomes, 'recordAttempts'>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** Called after a write that may have made deliveries claimable. */
  readonly #claimAgain: () => void;
  #results: AttemptResult[] = [];
  #flushing: Promise<void> | null = null;
  /** Outcomes are being written: a claim made meanwhile may have skipped their rows (PostgreSQL's SKIP LOCKED). */
  #writing = false;
  #claimedWhileWriting = false;

  constructor(store: Pick<Outcomes, 'recordAttempts'>, clock: Clock, logger: Logger, claimAgain: () => void) {
    this.#store = store;
    this.#clock = clock;
    this.#logger = logger;
    this.#claimAgain = claimAgain;
  }

  add(result: AttemptResult): void {
    this.#results.push(result);
    this.#flushing ??= new Promise<void>((resolve) => setTimeout(resolve, FLUSH_AFTER_MS)).then(() =>
      this.#flush(),
    );
  }

  /** A claim starts. */
  claiming(): void {
    if (this.#writing) this.#claimedWhileWriting = true;
  }

  /** No outcome waits to be written. */
  get idle(): boolean {
    return this.#results.length === 0 && this.#flushing === null;
  }

  /** Writes what waits now, after the write in progress. */
  async flush(): Promise<void> {
    await this.#flushing;
    await this.#flush();
  }

  async #flush(): Promise<void> {
    let retries = false;
    while (this.#results.length > 0) {
      const batch = this.#results;
      this.#results = [];
      retries ||= batch.some((r) => r.decision.kind === 'retry');
      this.#writing = true;
      try {
        await this.#store.recordAttempts(batch, this.#clock());
      } catch (err) {
        // The leases still hold these deliveries; when they expire the attempts are made again (at least once).
        this.#logger.error({ err, count: batch.length }, 'dispatcher: could not record attempts');
      } finally {
        this.#writing = false;
      }
    }
    this.#flushing = null;
    // A retry may fall due before the loop's sleep ends; and rows whose outcome was being written could not be
    // claimed meanwhile (PostgreSQL skips locked rows). Otherwise a claim now would find nothing new.
    if (retries || this.#claimedWhileWriting) this.#claimAgain();
    this.#claimedWhileWriting = false;
  }
}
