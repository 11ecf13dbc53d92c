/**
 * What every kind of destination offers the delivery thread, HTTP a peer of each broker: a provider takes one
 * attempt (the body, and the headers signed for it, to the destination's URL), sends it within the deadline over
 * a connection it keeps per address, and tells what came of it. It never throws. The registry (registry.ts) picks
 * the provider by the URL's scheme.
 */
import type { Signed } from '../../domain/signature.ts';
import type { AttemptOutcome } from '../../domain/types.ts';
import type { DestinationPolicy } from '../destination.ts';

/** One attempt: the secrets already opened, the timestamp taken by the caller's clock. */
export interface Sending extends Signed {
  destination_url: string;
}

export type Reply =
  /** An HTTP receiver answered (any status: retry-policy.ts judges it); its answer's first bytes kept. */
  | { kind: 'answer'; status: number; body: string | null; retryAfter: string | null }
  /** A broker acknowledged the message (a publisher confirm, a JetStream PubAck, XADD's entry id), in words. */
  | { kind: 'ack'; words: string }
  /** Nothing was delivered: why, in words (`timeout`, `destination_not_allowed`, `unroutable: …`). */
  | { kind: 'failed'; error: string };

export interface DestinationProvider {
  send(sending: Sending): Promise<Reply>;
  /** Closes every connection it opened. */
  close(): Promise<void>;
}

/** What each provider is made with: the deadline of one attempt, and the destination guard (destination.ts). */
export interface ProviderOptions {
  timeoutMs: number;
  /** The same policy the API checks at save time, applied again at every connection. */
  destinations: DestinationPolicy;
  userAgent: string;
}

export const failed = (error: string): Reply => ({ kind: 'failed', error });

/** A reply as the attempt's log keeps it; `started_at` is the caller's to set. */
export function outcomeOf(reply: Reply, durationMs: number): AttemptOutcome {
  const outcome = { started_at: 0, duration_ms: durationMs, retry_after: null };
  if (reply.kind === 'answer') {
    return {
      ...outcome,
      status_code: reply.status,
      error: null,
      response_body: reply.body,
      retry_after: reply.retryAfter,
    };
  }
  if (reply.kind === 'ack') {
    return { ...outcome, status_code: null, error: null, response_body: reply.words, acknowledged: true };
  }
  return { ...outcome, status_code: null, error: reply.error, response_body: null };
}
