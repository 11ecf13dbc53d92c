/**
 * The retention sweeper (RETENTION_DAYS): deletes finished deliveries, their attempts and the events left without
 * deliveries once they are older than the retention period. It works in small batches with a pause between them,
 * so that ingest and delivery, which share the database, never wait behind it for long.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { Store } from '../store/ports.ts';
import type { PurgeResult } from '../store/records.ts';

export interface RetentionOptions {
  store: Pick<Store, 'retention' | 'webhooks' | 'portalLinks'>;
  clock: Clock;
  retentionDays: number;
  logger: Logger;
  /** Rows per batch (deliveries, then events). */
  batchSize?: number;
  /** Pause between two batches, for the rest of the process. */
  pauseMs?: number;
  /** Time between sweeps; the first runs at start. */
  intervalMs?: number;
}

const DAY_MS = 86_400_000;

export class RetentionSweeper {
  readonly #options: Required<RetentionOptions>;
  #timer: NodeJS.Timeout | null = null;
  #sweeping: Promise<PurgeResult> | null = null;
  #stopping = false;

  constructor(options: RetentionOptions) {
    this.#options = { batchSize: 500, pauseMs: 20, intervalMs: 10 * 60_000, ...options };
  }

  start(): void {
    this.#stopping = false;
    this.#schedule(0);
  }

  /** Waits for the batch under way, if any; no batch starts after this is called. */
  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#sweeping?.catch(() => {});
  }

  /** Sweeps everything older than the cutoff, batch by batch; a sweep already under way is joined, not doubled. */
  sweep(): Promise<PurgeResult> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = null;
    });
    return this.#sweeping;
  }

  #schedule(delayMs: number): void {
    if (this.#stopping) return;
    this.#timer = setTimeout(async () => {
      try {
        await this.sweep();
      } catch (err) {
        this.#options.logger.error({ err }, 'retention: sweep failed; trying again at the next one');
      }
      this.#schedule(this.#options.intervalMs);
    }, delayMs);
  }

  async #sweep(): Promise<PurgeResult> {
    const { store, clock, retentionDays, batchSize, pauseMs, logger } = this.#options;
    const before = clock() - retentionDays * DAY_MS;
    // Rotated-out signing secrets are forgotten once their grace ends (they are not signed with after it anyway).
    await store.webhooks.forgetRotatedSecrets(clock());
    // Expired portal links are refused anyway; they go so that the table holds the live ones.
    await store.portalLinks.forgetExpiredPortalLinks(clock());
    const total: PurgeResult = { deliveries: 0, events: 0 };
    while (!this.#stopping) {
      const batch = await store.retention.purgeFinished(before, batchSize);
      total.deliveries += batch.deliveries;
      total.events += batch.events;
      if (batch.deliveries < batchSize && batch.events < batchSize) break;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    if (total.deliveries + total.events > 0) {
      logger.info(
        { ...total, before: new Date(before).toISOString() },
        'retention: removed finished deliveries',
      );
    }
    return total;
  }
}
