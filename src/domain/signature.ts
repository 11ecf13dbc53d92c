/**
 * The v1 signature (X-Service-Signature), and Standard Webhooks' (webhook-signature). They live in the receiver kit
 * (packages/receiver), which receivers install: Herald signs with the very code they verify with.
 */
export { HEADERS, SIGNATURE_VERSION, sign, signWith } from '../../packages/receiver/src/signature.ts';
export { STANDARD_HEADERS, signStandard, standardKey } from '../../packages/receiver/src/standard.ts';

import { HEADERS, signWith } from '../../packages/receiver/src/signature.ts';
import { STANDARD_HEADERS, signStandard } from '../../packages/receiver/src/standard.ts';

/** What an attempt signs: the event, its timestamp (seconds, as sent), its body, and the secrets, newest first. */
export interface Signed {
  event_id: string;
  timestamp: string;
  body: string;
  secrets: readonly string[];
  /** The webhook's own headers; never the ones Herald sets. */
  headers: Readonly<Record<string, string>> | null;
  /** Standard Webhooks' headers too. */
  standard: boolean;
}

/**
 * An attempt's headers, as an HTTP request or a broker's message carries them: the webhook's own first, so that
 * Herald's always win (the API refuses them anyway), then the event id, the timestamp and the signatures.
 */
export function signedHeaders(req: Signed): Record<string, string> {
  const headers: Record<string, string> = {
    ...req.headers,
    [HEADERS.eventId]: req.event_id,
    [HEADERS.timestamp]: req.timestamp,
  };
  if (req.secrets.length > 0) headers[HEADERS.signature] = signWith(req.secrets, req.timestamp, req.body);
  if (req.standard) {
    headers[STANDARD_HEADERS.id] = req.event_id;
    headers[STANDARD_HEADERS.timestamp] = req.timestamp;
    const signature = signStandard(req.secrets, req.event_id, req.timestamp, req.body);
    if (signature) headers[STANDARD_HEADERS.signature] = signature;
  }
  return headers;
}
