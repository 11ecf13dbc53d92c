/**
 * Downloads a file from the engine's file server (WAHA's `media.url`) into the spool: through the same destination
 * guard as deliveries (checked before, and again at every connection), with ENGINE_MEDIA_HEADERS (WAHA wants its
 * X-Api-Key), streamed and stopped at the size limit, within the delivery timeout for the whole answer.
 */
import { Agent, request } from 'undici';
import { checkDestination, createGuardedLookup, type DestinationPolicy } from '../net/destination.ts';
import {
  connectionFailed,
  type MediaFailure,
  refused,
  statusFailure,
  timedOut,
  tooLarge,
} from './media-failure.ts';
import { type Spooled, spool, TooLarge } from './spool.ts';

const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EMFILE', 'ENFILE']);

export interface EngineFetchOptions {
  destinations: DestinationPolicy;
  headers: Record<string, string>;
  timeoutMs: number;
  maxBytes: number;
  spoolDir: string;
}

/** The file in the spool with its Content-Type, or why there is none. */
export type Fetched =
  | { kind: 'file'; file: Spooled; contentType: string | null }
  | { kind: 'failed'; failure: MediaFailure };

const failed = (failure: MediaFailure): Fetched => ({ kind: 'failed', failure });
/** The guard's refusal speaks of a webhook's destination; here it is the engine's media.url. */
const refusal = (message: string) =>
  refused(message.replace(/^destination_url: /, '').replace('to send to it', 'to download from it'));

export class EngineFetch {
  readonly #options: EngineFetchOptions;
  readonly #agent: Agent;

  constructor(options: EngineFetchOptions) {
    this.#options = options;
    const { destinations } = options;
    this.#agent = new Agent({
      keepAliveTimeout: 10_000,
      ...(destinations.allowPrivate ? {} : { connect: { lookup: createGuardedLookup(destinations) } }),
    });
  }

  async fetch(url: string): Promise<Fetched> {
    const problem = await checkDestination(url, this.#options.destinations);
    if (problem) return failed(refusal(problem.message));
    // The whole answer, body included, within the timeout; the timer ends with the download, so an abort can never
    // reach a stream nobody reads any more.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.#options.timeoutMs);
    const { signal } = abort;
    try {
      const res = await request(url, { dispatcher: this.#agent, headers: this.#options.headers, signal });
      // Errors after the body is given up (destroyed below) are expected: never an unhandled 'error' event.
      res.body.on('error', () => {});
      if (res.statusCode < 200 || res.statusCode > 299) {
        res.body.destroy();
        return failed(statusFailure(res.statusCode, Object.keys(this.#options.headers)));
      }
      const declared = Number(res.headers['content-length']);
      if (declared > this.#options.maxBytes) {
        res.body.destroy();
        return failed(tooLarge(this.#options.maxBytes));
      }
      const type = res.headers['content-type'];
      try {
        const file = await spool(res.body, this.#options.spoolDir, this.#options.maxBytes);
        return { kind: 'file', file, contentType: typeof type === 'string' ? type : null };
      } catch (err) {
        res.body.destroy();
        if (err instanceof TooLarge) return failed(tooLarge(this.#options.maxBytes));
        throw err;
      }
    } catch (err) {
      const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
      // A disk of Herald's own that fails is no fault of the engine's: the job is tried again, not settled.
      if (DISK_ERRORS.has(e.code ?? '')) throw err;
      if (signal.aborted) return failed(timedOut(this.#options.timeoutMs));
      // The guard refuses again at the connection, should the name resolve elsewhere by then.
      if (e.code === 'destination_not_allowed') return failed(refusal(e.message));
      if (e.cause?.code === 'destination_not_allowed') return failed(refusal(e.cause.message ?? ''));
      return failed(connectionFailed(e.message));
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.#agent.destroy();
  }
}
