/**
 * Settles engine media after the 202: claims media jobs from the store, downloads each file (media.ts), and writes
 * the settled media object into its event, which starts the event's deliveries. Jobs live in the store, so a crash
 * mid-download only means the download is made again; any process that delivers may take any job.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { fileless } from '../domain/media-object.ts';
import { redactForeignUrl } from '../domain/redact-url.ts';
import type { MediaObserver } from '../metrics/metrics.ts';
import type { Store } from '../store/ports.ts';
import type { MediaJob } from '../store/records.ts';
import { startMediaSpan } from '../telemetry/media-span.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import { Wakeup } from '../wakeup.ts';
import type { Media } from './media.ts';
import { failedStatus, type MediaFailure, storageFailed } from './media-failure.ts';

export interface MediaJobsOptions {
  store: Pick<Store, 'mediaJobs'>;
  media: Media;
  clock: Clock;
  logger: Logger;
  /** How long a claimed job is this process's: longer than a download and a write to the media store take. */
  leaseMs: number;
  /** Downloads at once. */
  concurrency?: number;
  /** Counts the failures (/metrics). */
  observer?: MediaObserver | null;
  /** A span per download (tracing on). */
  tracing?: Tracing | null;
}

/** Upper bound on a sleep, so that a missed wake-up (another process's ingest) costs at most this much. */
const MAX_SLEEP_MS = 1000;
/** Faults of Herald's own (its media store unreachable, its disk full) are tried again this often, then given up. */
const RETRY_MS = 5000;
const MAX_TRIES = 12;

export class MediaJobs {
  readonly #options: Required<MediaJobsOptions>;
  readonly #running = new Set<Promise<void>>();
  #loop: Promise<void> | null = null;
  #stopping = false;
  readonly #wakeup = new Wakeup();

  constructor(options: MediaJobsOptions) {
    this.#options = { concurrency: 4, observer: null, tracing: null, ...options };
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** There may be a new job (an ingest committed one). */
  wake(): void {
    this.#wakeup.wake();
  }

  /** Stops claiming and waits for the downloads under way; a job cut short is claimed again after its lease. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    await Promise.all(this.#running);
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#wakeup.begin();
      const free = this.#options.concurrency - this.#running.size;
      try {
        if (free > 0) {
          const jobs = await this.#options.store.mediaJobs.claimMediaJobs(
            this.#options.clock(),
            free,
            this.#options.leaseMs,
          );
          for (const job of jobs) this.#track(this.#settle(job));
          if (jobs.length === free) continue;
        }
      } catch (err) {
        this.#options.logger.error({ err }, 'media jobs: claim failed; retrying shortly');
      }
      if (!this.#stopping) await this.#wakeup.sleep(MAX_SLEEP_MS);
    }
  }

  #track(run: Promise<void>): void {
    this.#running.add(run);
    run.finally(() => {
      this.#running.delete(run);
      this.wake();
    });
  }

  async #settle(job: MediaJob): Promise<void> {
    const { store, media, clock, logger, tracing } = this.#options;
    const span = tracing && startMediaSpan(tracing, job);
    try {
      const { media: settled, failure } = await media.fetchEngineMedia(job.instance_id, job);
      span?.end(failure?.reason ?? null);
      const done = await store.mediaJobs.settleMediaJob(job, settled, clock(), failure?.detail ?? null);
      if (done && failure) this.#failed(job, failure);
    } catch (err) {
      span?.end('storage_failed');
      logger.error(
        { err, event_id: job.event_id, tries: job.tries + 1 },
        'media jobs: could not store engine media',
      );
      try {
        if (job.tries + 1 < MAX_TRIES) {
          await store.mediaJobs.retryMediaJob(job, clock() + RETRY_MS);
        } else {
          // Given up at last as failed, so the deliveries are not held for ever.
          const failure = storageFailed(MAX_TRIES, (err as Error).message);
          const failedMedia = fileless('failed', job.mimetype);
          if (await store.mediaJobs.settleMediaJob(job, failedMedia, clock(), failure.detail))
            this.#failed(job, failure);
        }
      } catch (e) {
        logger.error({ err: e }, 'media jobs: could not record the failure');
      }
    }
  }

  /** Says why, once the failure is stored: in the log (the url without its query's values) and in /metrics. */
  #failed(job: MediaJob, failure: MediaFailure): void {
    this.#options.logger.warn(
      {
        instance_id: job.instance_id,
        event_id: job.event_id,
        url: job.url ? redactForeignUrl(job.url) : null,
        media: failedStatus(failure),
        reason: failure.reason,
      },
      `engine media not stored: ${failure.detail}`,
    );
    this.#options.observer?.engineMediaFailed(failure.reason);
  }
}
