/**
 * WAHA's webhook signature: `X-Webhook-Hmac` is the lowercase hex HMAC-SHA512 of the raw body, keyed with the
 * session's HMAC key, and `X-Webhook-Hmac-Algorithm` says `sha512`. Pure: the caller opens the stored key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const ENGINE_HMAC_HEADERS = { hmac: 'x-webhook-hmac', algorithm: 'x-webhook-hmac-algorithm' } as const;

export function engineHmac(key: string, body: Buffer | string): string {
  return createHmac('sha512', key).update(body).digest('hex');
}

/** Why the request is not signed with `key`, or null when it is. Compared in constant time. */
export function checkEngineHmac(
  key: string,
  body: Buffer,
  hmac: string | undefined,
  algorithm: string | undefined,
): string | null {
  if (hmac === undefined) {
    return 'X-Webhook-Hmac: is required, because this instance has an engine HMAC key';
  }
  if (algorithm?.trim().toLowerCase() !== 'sha512') {
    return 'X-Webhook-Hmac-Algorithm: must be sha512';
  }
  const expected = Buffer.from(engineHmac(key, body), 'hex');
  const given = /^[0-9a-f]{128}$/i.test(hmac.trim()) ? Buffer.from(hmac.trim(), 'hex') : Buffer.alloc(0);
  const ok = given.length === expected.length && timingSafeEqual(given, expected);
  return ok ? null : "X-Webhook-Hmac: does not match the body signed with this instance's engine HMAC key";
}
