/**
 * The HTTP provider (provider.ts): one attempt is a signed POST through undici, no redirect followed, the whole
 * answer within the timeout (its first 4 KiB kept). Its connections (64 per origin, kept alive) dial through the
 * destination guard's lookup.
 */
import { isIP } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { failed, type Reply } from '../../domain/reply.ts';
import { Deadlines, type Expiring } from '../deadlines.ts';
import { createGuardedLookup, type DestinationPolicy, isAllowedAddress } from '../destination.ts';
import { attemptHeaders, type DestinationProvider, type ProviderOptions, type Sending } from './provider.ts';

export const RESPONSE_BODY_KEPT = 4096;

/** A destination URL as undici's dispatch takes it, and whether an IP literal in it is allowed. */
interface Target {
  origin: string;
  path: string;
  allowed: boolean;
}

export class HttpProvider implements DestinationProvider {
  readonly #options: ProviderOptions;
  readonly #agent: Agent;
  readonly #deadlines: Deadlines;
  /** Parsed once per destination URL: bounded by the webhooks' URLs. */
  readonly #targets = new Map<string, Target>();

  constructor(options: ProviderOptions) {
    this.#options = options;
    this.#deadlines = new Deadlines(options.timeoutMs);
    // The guarded lookup re-checks every address at connect time: a name cannot be rebound to a private address.
    this.#agent = new Agent({
      keepAliveTimeout: 30_000,
      connections: 64,
      ...(options.destinations.allowPrivate
        ? {}
        : { connect: { lookup: createGuardedLookup(options.destinations) } }),
    });
  }

  /** After the dispatcher's stop: a request still open was released to the next process. */
  async close(): Promise<void> {
    this.#deadlines.close();
    await this.#agent.destroy();
  }

  send(req: Sending): Promise<Reply> {
    const headers: Record<string, string> = {
      ...attemptHeaders(req),
      'content-type': 'application/json',
      'user-agent': this.#options.userAgent,
    };
    const target = this.#target(req.destination_url);
    if (!target.allowed) return Promise.resolve(failed('destination_not_allowed'));
    return new Promise((resolve) => {
      const exchange = new Exchange((answer) => {
        deadline.release();
        resolve(answer === 'timeout' || deadline.expired() ? failed('timeout') : replyOf(answer));
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

/** What the exchange settles with: the answer, or what went wrong on the way (the deadline is apart). */
type Exchanged = Extract<Reply, { kind: 'answer' }> | { error: unknown };

const replyOf = (s: Exchanged): Reply => ('error' in s ? failed(errorCode(s.error)) : s);

/** IP literals never reach the lookup hook, so they are judged here. */
function literalHostAllowed(hostname: string, policy: DestinationPolicy): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return isIP(host) === 0 || isAllowedAddress(host, policy.allow);
}

const ERROR_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  // The guard's lookup found no address (HostUnresolved keeps the resolver's code): nothing was sent, and the
  // attempt is retried on schedule, as a name that does not resolve now may resolve later.
  ENOTFOUND: 'dns_error',
  EAI_AGAIN: 'dns_error',
  EAI_FAIL: 'dns_error',
  ENODATA: 'dns_error',
  ESERVFAIL: 'dns_error',
  ETIMEOUT: 'dns_error',
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

const timeoutError = () => new DOMException('the delivery timeout elapsed', 'TimeoutError');

/**
 * One request and its answer, as undici's dispatch handler, settled once by the answer's end, an error or the
 * deadline. Not undici's `request()`: it adds a stream, an abort listener and an async resource to every answer.
 */
class Exchange implements Dispatcher.DispatchHandler, Expiring {
  readonly #settle: (s: Exchanged | 'timeout') => void;
  #controller: Dispatcher.DispatchController | null = null;
  #settled = false;
  #status = 0;
  #retryAfter: string | null = null;
  #kept: Buffer[] = [];
  #size = 0;

  constructor(settle: (s: Exchanged | 'timeout') => void) {
    this.#settle = settle;
  }

  /** The deadline passed: settled as a timeout now, and the request aborted as soon as undici lets it be. */
  expire(): void {
    if (this.#settled) return;
    this.#done('timeout');
    this.#controller?.abort(timeoutError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Expired while waiting for a connection: it never goes out.
    if (this.#settled) controller.abort(timeoutError());
  }

  onResponseStart(
    _: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, unknown>,
  ): void {
    if (statusCode < 200) return; // 1xx: informational, the answer follows
    this.#status = statusCode;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = typeof retryAfter === 'string' ? retryAfter : null;
  }

  onResponseData(_: Dispatcher.DispatchController, chunk: Buffer): void {
    // A copy, not a view: a view would pin the whole (up to 64 KiB) chunk until the attempt is logged.
    if (this.#size < RESPONSE_BODY_KEPT)
      this.#kept.push(Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - this.#size)));
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    const body = this.#kept.length ? Buffer.concat(this.#kept).toString('utf8') : null;
    this.#done({ kind: 'answer', status: this.#status, body, retryAfter: this.#retryAfter });
  }

  onResponseError(_: Dispatcher.DispatchController | null, error: Error): void {
    this.#done({ error });
  }

  #done(s: Exchanged | 'timeout'): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#kept = [];
    this.#settle(s);
  }
}
