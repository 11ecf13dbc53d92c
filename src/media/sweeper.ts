/**
 * Deletes expired media files in small batches, on a timer, with an injectable clock. A failure is logged and
 * tried again next round: a file that outlives its links costs only disk space.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { MediaStore } from './media-store.ts';
import { cleanSpool } from './spool.ts';

export interface MediaSweeperOptions {
  media: MediaStore;
  spoolDir: string;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  batch?: number;
}

/** A temporary upload file untouched this long is a crash leftover (an upload in progress writes constantly). */
const SPOOL_MAX_AGE_MS = 3600_000;

export class MediaSweeper {
  readonly #options: Required<MediaSweeperOptions>;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;

  constructor(options: MediaSweeperOptions) {
    this.#options = { intervalMs: 60_000, batch: 100, ...options };
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.sweep(), this.#options.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** One round: batch after batch until nothing due is left. Returns how many files were deleted. */
  sweep(): Promise<number> {
    this.#running ??= this.#round().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #round(): Promise<number> {
    const { media, clock, batch, logger } = this.#options;
    let deleted = 0;
    try {
      for (;;) {
        const r = await media.sweep(clock(), batch);
        deleted += r.deleted.length;
        if (r.markers < batch) break;
        await new Promise((resolve) => setImmediate(resolve)); // let requests in between batches
      }
      // File times are wall-clock times, so this one comparison uses the wall clock, not the injected one.
      await cleanSpool(this.#options.spoolDir, Date.now(), SPOOL_MAX_AGE_MS);
      if (deleted > 0) logger.info({ deleted }, 'media sweeper: expired files deleted');
    } catch (err) {
      logger.error({ err }, 'media sweeper: round failed; trying again next round');
    }
    return deleted;
  }
}
