/**
 * What every kind of destination offers the delivery thread, HTTP a peer of each broker: a provider takes one
 * attempt (the body, and the headers signed for it, to the destination's URL), sends it within the deadline over
 * a connection it keeps per address, and tells what came of it. It never throws. The registry (registry.ts) picks
 * the provider by the URL's scheme. What comes of an attempt is a Reply (domain/reply.ts).
 */

import type { Reply } from '../../domain/reply.ts';
import { type Signed, signedHeaders } from '../../domain/signature.ts';
import type { DestinationPolicy } from '../destination.ts';

/** One attempt: the secrets already opened, the timestamp taken by the caller's clock. */
export interface Sending extends Signed {
  destination_url: string;
  /** The W3C traceparent naming this attempt's span, when tracing is on; never signed. */
  traceparent?: string;
}

/** An attempt's headers: the signed ones (signature.ts), and its traceparent, which the signature does not cover. */
export function attemptHeaders(req: Sending): Record<string, string> {
  const headers = signedHeaders(req);
  if (req.traceparent) headers.traceparent = req.traceparent;
  return headers;
}

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
