/**
 * Makes one attempt's request: a signed POST through undici, answer read within the timeout, never a redirect
 * followed. It runs in the sender thread (sender-thread.ts); the attempt's clock and secrets stay with the caller.
 */
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { createGuardedLookup, type DestinationPolicy, isAllowedAddress } from '../domain/destination.ts';
import { HEADERS, sign } from '../domain/signature.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import { Deadlines } from './deadlines.ts';

export const RESPONSE_BODY_KEPT = 4096;

/** What a request needs: the secret already opened, the timestamp taken by the caller's clock. */
export interface SendRequest {
  destination_url: string;
  event_id: string;
  body: string;
  /** Seconds, as signed and sent in the timestamp header. */
  timestamp: string;
  secret: string | null;
}

/** An attempt's outcome but its timing, which the caller measures with its own clock. */
export type SendResult = Omit<AttemptOutcome, 'started_at' | 'duration_ms'>;

export interface SenderOptions {
  timeoutMs: number;
  /** The same policy the API checks at save time, applied again at every connection. */
  destinations: DestinationPolicy;
  userAgent: string;
}

export class Sender {
  readonly #options: SenderOptions;
  readonly #agent: Agent;
  readonly #deadlines: Deadlines;

  constructor(options: SenderOptions) {
    this.#options = options;
    this.#deadlines = new Deadlines(options.timeoutMs);
    // Connections are reused per origin; the guarded lookup re-checks every resolved address at connect time,
    // so a name that passed when saved cannot be rebound to a private address later.
    this.#agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: 64,
      ...(options.destinations.allowPrivate
        ? {}
        : { connect: { lookup: createGuardedLookup(options.destinations) } }),
    });
  }

  /** After the dispatcher's stop: a request still open then was released to the next process, so it is dropped. */
  async close(): Promise<void> {
    this.#deadlines.close();
    await this.#agent.destroy();
  }

  async send(req: SendRequest): Promise<SendResult> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.#options.userAgent,
      [HEADERS.eventId]: req.event_id,
      [HEADERS.timestamp]: req.timestamp,
    };
    if (req.secret !== null) headers[HEADERS.signature] = sign(req.secret, req.timestamp, req.body);
    const result = (fields: Partial<SendResult>): SendResult => ({
      status_code: null,
      error: null,
      response_body: null,
      retry_after: null,
      ...fields,
    });
    const policy = this.#options.destinations;
    if (!policy.allowPrivate && !literalHostAllowed(req.destination_url, policy)) {
      return result({ error: 'destination_not_allowed' });
    }
    const deadline = this.#deadlines.start();
    try {
      const res = await request(req.destination_url, {
        method: 'POST',
        headers,
        body: req.body,
        dispatcher: this.#agent,
        signal: deadline.signal,
      });
      const kept = await readKept(res.body);
      // The wheel aborts up to a slot late: an answer completed after the deadline is a timeout all the same.
      if (deadline.expired()) return result({ error: 'timeout' });
      const retryAfter = res.headers['retry-after'];
      return result({
        status_code: res.statusCode,
        response_body: kept,
        retry_after: typeof retryAfter === 'string' ? retryAfter : null,
      });
    } catch (err) {
      return result({ error: errorCode(err) });
    } finally {
      deadline.release();
    }
  }
}

/**
 * The answer is complete only when its body has arrived: keeps its first 4 KiB as text (null when empty) and
 * drops the rest as it streams. Events rather than `for await`: the async iterator's promises per chunk were a
 * visible share of a send that reads an empty body.
 */
function readKept(body: Readable): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const kept: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      // A copy, not a view: a view would pin the whole (up to 64 KiB) chunk until the attempt is logged.
      if (size < RESPONSE_BODY_KEPT) kept.push(Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - size)));
      size += chunk.length;
    });
    body.once('end', () => resolve(kept.length ? Buffer.concat(kept).toString('utf8') : null));
    body.once('error', reject);
  });
}

/** IP literals never reach the lookup hook, so they are judged here. */
function literalHostAllowed(url: string, policy: DestinationPolicy): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 0 || isAllowedAddress(host, policy.allow);
}

const ERROR_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  ENOTFOUND: 'dns_error',
  EAI_AGAIN: 'dns_error',
  EHOSTUNREACH: 'host_unreachable',
  ENETUNREACH: 'host_unreachable',
  destination_not_allowed: 'destination_not_allowed',
};

function errorCode(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  const code = e.code ?? e.cause?.code ?? '';
  if (ERROR_CODES[code]) return ERROR_CODES[code];
  if (/CERT|TLS|SSL/i.test(code)) return 'tls_error';
  return 'connection_error';
}
