/**
 * What every broker publisher offers the delivery pipeline: one attempt in, one answer out. An attempt is
 * delivered only on the broker's own acknowledgement (a publisher confirm, a JetStream PubAck, XADD's entry id),
 * never on a socket write; anything else, the deadline included, is a failed answer, in words, that the caller
 * retries. publish never throws, and no answer ever holds the destination's password.
 */
import { type BrokerTarget, brokerAddress } from '../../domain/broker-url.ts';
import { failed, type Reply } from '../../domain/reply.ts';
import { type DestinationPolicy, DestinationRefused, HostUnresolved } from '../destination.ts';
import { BackingOff, type PoolOptions } from './connections.ts';

export interface BrokerMessage {
  event_id: string;
  /** The event kind, e.g. "message.received". */
  event: string;
  /** Seconds, as signed. */
  timestamp: string;
  /** The signature header's value, or null when the webhook has no secret. */
  signature: string | null;
  /** Built by the caller: Herald's X-Service-* headers and the webhook's own. */
  headers: Record<string, string>;
  body: string;
  /** The attempt's W3C traceparent (tracing on): in `headers` too; Redis, which has no headers, gives it a field. */
  traceparent?: string | null;
}

/**
 * A broker's reply (domain/reply.ts): acknowledged in words, e.g. "broker_ack", "broker_ack stream=S seq=N",
 * "broker_ack 1712345678901-0"; or failed with the broker's reason, e.g. `unroutable: …`, `timeout: no confirm
 * within 5000 ms`.
 */
export type BrokerAnswer = Extract<Reply, { kind: 'ack' | 'failed' }>;

export interface BrokerPublisher<T extends BrokerTarget = BrokerTarget> {
  publish(target: T, message: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer>;
  close(): Promise<void>;
}

/** How each publisher is made: the guard its connections dial through, their pool, how long opening one may take. */
export interface PublisherOptions {
  /** Applied at every connection to the broker's host, reconnects included (pinning.ts). */
  destinations: DestinationPolicy;
  pool?: PoolOptions;
  /** The TCP connection plus the broker's handshake (AUTH and SELECT on Redis); default CONNECT_TIMEOUT_MS. */
  connectTimeoutMs?: number;
}
export const CONNECT_TIMEOUT_MS = 10_000;

export { acknowledged as delivered, failed } from '../../domain/reply.ts';

/** Settles with the work's result, or with `late()` when the deadline passes first; the timer never holds a process. */
export function withDeadline<T>(ms: number, work: Promise<T>, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
    timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The next turn of the event loop: what was received alongside an acknowledgement has been handled by then. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A connection that broke while it was open: its client reconnects, and meanwhile attempts fail with why. */
export class ConnectionDown extends Error {
  constructor(reason: string) {
    super(`connection down: ${reason}; reconnecting`);
  }
}

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused by {addr}',
  ECONNRESET: 'connection reset by {addr}',
  EPIPE: 'connection reset by {addr}',
  ETIMEDOUT: 'connection to {addr} timed out',
  EHOSTUNREACH: 'host {addr} unreachable',
  ENETUNREACH: 'host {addr} unreachable',
  ENOTFOUND: 'host "{host}" not found',
  EAI_AGAIN: 'host "{host}" not found (DNS lookup failed)',
};

/** The bare error an attempt refused by the destination guard answers with: retry-policy.ts fails it at once. */
export const REFUSED = 'destination_not_allowed';

/** True when the guard refused the broker's address, at this dial or at the one its address now backs off from. */
export const refusedByGuard = (err: unknown): boolean =>
  err instanceof DestinationRefused || (err instanceof BackingOff && err.cause instanceof DestinationRefused);

/**
 * What a network-level failure means, in words, or null when it is not one (then the broker's own mapping
 * applies). Shared by the three publishers so the same cut reads the same everywhere.
 */
export function socketWords(err: unknown, target: BrokerTarget): string | null {
  if (err instanceof DestinationRefused) return REFUSED;
  if (err instanceof HostUnresolved) return err.message; // "could not resolve <host>: …", retried on schedule
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  const code = e?.code ?? e?.cause?.code ?? '';
  const text = SOCKET_ERRORS[code];
  if (text) return text.replace('{addr}', brokerAddress(target)).replace('{host}', target.host);
  if (/CERT|TLS|SSL|ERR_SSL/i.test(code)) return `tls error with ${brokerAddress(target)}: ${code}`;
  return null;
}

/** Every answer passes here last: the password (and its %-encoded form) can never leave in an error text. */
export function scrub(text: string, target: BrokerTarget): string {
  let out = text;
  for (const secret of new Set([target.password, encodeURIComponent(target.password)])) {
    if (secret) out = out.split(secret).join('****');
  }
  return out;
}

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * One publish as every publisher answers it: the work run inside a promise (even a malformed target answers rather
 * than throws), its error in words, the deadline's answer `late` when it takes too long, and no password in any of it.
 */
export async function answerWithin(
  target: BrokerTarget,
  timeoutMs: number,
  late: string,
  work: () => Promise<BrokerAnswer>,
  words: (err: unknown) => string,
): Promise<BrokerAnswer> {
  const attempt = Promise.resolve()
    .then(work)
    .catch((err) => failed(words(err)));
  const answer = await withDeadline(timeoutMs, attempt, () => failed(late));
  return answer.kind === 'ack' ? answer : failed(scrub(answer.error, target));
}
