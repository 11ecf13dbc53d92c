/**
 * Makes one attempt's request: a signed POST through undici, answer read within the timeout, never a redirect
 * followed. It runs in the sender thread (sender-thread.ts); the attempt's clock and secrets stay with the caller.
 */
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { createGuardedLookup, type DestinationPolicy, isAllowedAddress } from '../domain/destination.ts';
import { HEADERS, sign } from '../domain/signature.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import { Deadlines } from './deadlines.ts';
import { Exchange, type Reply } from './exchange.ts';

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

/** A destination URL as undici's dispatch takes it, and whether an IP literal in it is allowed. */
interface Target {
  origin: string;
  path: string;
  allowed: boolean;
}

export class Sender {
  readonly #options: SenderOptions;
  readonly #agent: Agent;
  readonly #deadlines: Deadlines;
  /** Parsed once per destination URL: bounded by the webhooks' URLs. */
  readonly #targets = new Map<string, Target>();

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
    const target = this.#target(req.destination_url);
    if (!target.allowed) return failed('destination_not_allowed');
    return new Promise((resolve) => {
      const exchange = new Exchange((answer) => {
        deadline.release();
        resolve(resultOf(answer, deadline.expired()));
      });
      const deadline = this.#deadlines.start(exchange);
      try {
        this.#agent.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers, body: req.body },
          exchange,
        );
      } catch (err) {
        exchange.onResponseError(null, err as Error);
      }
    });
  }

  #target(url: string): Target {
    let target = this.#targets.get(url);
    if (!target) {
      if (this.#targets.size >= 10_000) this.#targets.clear();
      const parsed = new URL(url);
      const policy = this.#options.destinations;
      target = {
        origin: parsed.origin,
        path: parsed.pathname + parsed.search,
        allowed: policy.allowPrivate || literalHostAllowed(parsed.hostname, policy),
      };
      this.#targets.set(url, target);
    }
    return target;
  }
}

const failed = (error: string): SendResult => ({
  status_code: null,
  error,
  response_body: null,
  retry_after: null,
});

/** The wheel expires up to a slot late: an answer completed after the deadline is a timeout all the same. */
function resultOf(answer: Reply | 'timeout', expired: boolean): SendResult {
  if (answer === 'timeout' || expired) return failed('timeout');
  if ('error' in answer) return failed(errorCode(answer.error));
  return { ...answer, error: null };
}

/** IP literals never reach the lookup hook, so they are judged here. */
function literalHostAllowed(hostname: string, policy: DestinationPolicy): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
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
