/**
 * What came of sending one attempt to a destination, whatever its kind: an HTTP receiver's answer, a broker's
 * explicit acknowledgement, or a failure in words; and the same as the attempt's log keeps it. Pure.
 */
import type { AttemptOutcome } from './types.ts';

export type Reply =
  /** An HTTP receiver answered (any status: retry-policy.ts judges it); its answer's first bytes kept. */
  | { kind: 'answer'; status: number; body: string | null; retryAfter: string | null }
  /** A broker acknowledged the message (a publisher confirm, a JetStream PubAck, XADD's entry id), in words. */
  | { kind: 'ack'; words: string }
  /** Nothing was delivered: why, in words (`timeout`, `destination_not_allowed`, `unroutable: …`). */
  | { kind: 'failed'; error: string };

export const acknowledged = (words: string): Reply & { kind: 'ack' } => ({ kind: 'ack', words });
export const failed = (error: string): Reply & { kind: 'failed' } => ({ kind: 'failed', error });

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
