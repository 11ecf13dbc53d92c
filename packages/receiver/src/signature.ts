import { createHmac } from 'node:crypto';

/** Scheme prefix of X-Service-Signature values; bump it when the signed payload changes shape. */
export const SIGNATURE_VERSION = 'v1';

/**
 * 'v1=' + lowercase hex HMAC-SHA256(secret, `${timestampSeconds}.${body}`).
 * body must be the exact bytes sent on the wire (string bodies are hashed as UTF-8),
 * because receivers verify against the raw bytes they receive.
 */
export function sign(secret: string, timestampSeconds: number | string, body: string | Uint8Array): string {
  // An empty key still yields a valid HMAC, which would make every signature forgeable.
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('sign: secret must be a non-empty string');
  }
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestampSeconds}.`);
  // Feed the body separately so binary bodies are not decoded/re-encoded through a string.
  hmac.update(body);
  return `${SIGNATURE_VERSION}=${hmac.digest('hex')}`;
}

/**
 * The signature header's value for one or more secrets, newest first, separated by a space: while a rotated-out
 * secret is still honoured (its grace), a receiver accepts the delivery with either one.
 */
export function signWith(
  secrets: readonly string[],
  timestampSeconds: number | string,
  body: string | Uint8Array,
): string {
  return secrets.map((s) => sign(s, timestampSeconds, body)).join(' ');
}

/** Herald's header names, lowercase as they appear on the wire in Node. */
export const HEADERS = {
  eventId: 'x-service-event-id',
  timestamp: 'x-service-timestamp',
  signature: 'x-service-signature',
} as const;
