/**
 * Downloads a file from the engine's file server (WAHA's `media.url`) into the spool, only where the operator said:
 * a URL under ENGINE_MEDIA_PREFIXES (or the instance's own engine_media_prefix) from any address, with
 * ENGINE_MEDIA_HEADERS (WAHA wants its X-Api-Key) when its event came through an engine endpoint; any other URL
 * from a globally reachable address only, never with them. The address is resolved and checked once and the
 * connection goes there (media-address.ts); the answer is streamed, stopped at the size limit, and must be complete
 * within the delivery timeout.
 */
import { Agent, request } from 'undici';
import { effectivePrefixes, mediaSource } from '../domain/media-prefix.ts';
import type { Lookup } from '../net/destination.ts';
import { pinnedLookup, resolveMedia } from './media-address.ts';
import {
  connectionFailed,
  type MediaFailure,
  outsidePrefixes,
  refused,
  statusFailure,
  timedOut,
  tooLarge,
  unresolvedOutsidePrefixes,
} from './media-failure.ts';
import { type Spooled, spool, TooLarge } from './spool.ts';

const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO', 'EMFILE', 'ENFILE']);

export interface EngineFetchOptions {
  /** ENGINE_MEDIA_PREFIXES as configured. */
  prefixes: readonly string[];
  /** ENGINE_MEDIA_HEADERS. */
  headers: Record<string, string>;
  /** Resolver; the system's when absent. Tests point names at 127.0.0.1 with it. */
  lookup?: Lookup;
  timeoutMs: number;
  maxBytes: number;
  spoolDir: string;
}

/** Where a download's URL came from: an engine endpoint or Herald's own event API, and for which instance's prefix. */
export interface MediaOrigin {
  viaEngine: boolean;
  /** The instance's engine_media_prefix, or null for ENGINE_MEDIA_PREFIXES as a whole. */
  instancePrefix: string | null;
}

/** The file in the spool with its Content-Type, or why there is none. */
export type Fetched =
  | { kind: 'file'; file: Spooled; contentType: string | null }
  | { kind: 'failed'; failure: MediaFailure };

const failed = (failure: MediaFailure): Fetched => ({ kind: 'failed', failure });

export class EngineFetch {
  readonly #options: EngineFetchOptions;

  constructor(options: EngineFetchOptions) {
    this.#options = options;
  }

  async fetch(url: string, origin: MediaOrigin): Promise<Fetched> {
    const { prefixes, headers } = this.#options;
    const source = mediaSource(url, effectivePrefixes(prefixes, origin.instancePrefix), origin.viaEngine);
    if (source.kind === 'refused') return failed(refused(source.why));
    const { hostname } = new URL(url);
    // One deadline for the lookup and the whole answer.
    const deadline = Date.now() + this.#options.timeoutMs;
    const resolved = await withinTime(
      resolveMedia(hostname, source.kind === 'public', this.#options.lookup),
      this.#options.timeoutMs,
    );
    if (resolved === null) return failed(timedOut(this.#options.timeoutMs));
    if (resolved.kind !== 'addresses') {
      if (source.kind === 'prefixed') {
        return failed(
          connectionFailed(`${hostname} could not be resolved (${(resolved as { code: string }).code})`),
        );
      }
      const where = prefixesSaid(prefixes, origin.instancePrefix);
      return failed(
        resolved.kind === 'refused'
          ? outsidePrefixes(where, resolved.why)
          : unresolvedOutsidePrefixes(where, hostname, resolved.code),
      );
    }
    const sent = source.kind === 'prefixed' && source.headers ? headers : {};
    const withheld =
      Object.keys(headers).length === 0 || sent === headers
        ? null
        : source.kind === 'public'
          ? `media.url is not under ${prefixesSaid(prefixes, origin.instancePrefix)}`
          : 'the event was not posted to an engine endpoint';
    const agent = new Agent({ connect: { lookup: pinnedLookup(resolved.addresses) } });
    try {
      return await this.#download(url, agent, sent, withheld, deadline);
    } finally {
      await agent.destroy();
    }
  }

  async #download(
    url: string,
    agent: Agent,
    headers: Record<string, string>,
    withheld: string | null,
    deadline: number,
  ): Promise<Fetched> {
    const { timeoutMs, maxBytes, spoolDir } = this.#options;
    // The whole answer, body included, by the deadline; the timer ends with the download, so an abort can never
    // reach a stream nobody reads any more.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
    const { signal } = abort;
    try {
      const res = await request(url, { dispatcher: agent, headers, signal });
      // Errors after the body is given up (destroyed below) are expected: never an unhandled 'error' event.
      res.body.on('error', () => {});
      if (res.statusCode < 200 || res.statusCode > 299) {
        res.body.destroy();
        return failed(statusFailure(res.statusCode, Object.keys(headers), withheld));
      }
      const declared = Number(res.headers['content-length']);
      if (declared > maxBytes) {
        res.body.destroy();
        return failed(tooLarge(maxBytes));
      }
      const type = res.headers['content-type'];
      try {
        const file = await spool(res.body, spoolDir, maxBytes);
        return { kind: 'file', file, contentType: typeof type === 'string' ? type : null };
      } catch (err) {
        res.body.destroy();
        if (err instanceof TooLarge) return failed(tooLarge(maxBytes));
        throw err;
      }
    } catch (err) {
      const e = err as Error & { code?: string };
      // A disk of Herald's own that fails is no fault of the engine's: the job is tried again, not settled.
      if (DISK_ERRORS.has(e.code ?? '')) throw err;
      if (signal.aborted) return failed(timedOut(timeoutMs));
      return failed(connectionFailed(e.message));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Each download closes its own connection; nothing is held between downloads. */
  async close(): Promise<void> {}
}

/** The promise's value, or null when it takes longer than `ms`. */
async function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The prefixes a URL was judged against, in words for the failure. */
function prefixesSaid(operator: readonly string[], instance: string | null): string {
  if (instance !== null) {
    const stale =
      effectivePrefixes(operator, instance).length === 0 ? ', no longer within ENGINE_MEDIA_PREFIXES' : '';
    return `this instance's engine_media_prefix (${instance}${stale})`;
  }
  return `ENGINE_MEDIA_PREFIXES (${operator.length > 0 ? operator.join(', ') : 'unset'})`;
}
