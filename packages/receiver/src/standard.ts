/**
 * Standard Webhooks (standardwebhooks.com): the headers a webhook with `standard_webhooks` carries beside Herald's
 * own, and their verification. Herald signs with signStandard; a receiver verifies with verifyStandard, or with the
 * `standardwebhooks` and `svix` libraries as they are.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { firstHeader, type HeaderInput, type VerifyFailure, type VerifyResult } from './verify.ts';

export const STANDARD_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

const PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The key of a Standard Webhooks secret (`whsec_` and the base64 of 24 to 64 bytes), or null for any other. */
export function standardKey(secret: string): Buffer | null {
  if (!secret.startsWith(PREFIX)) return null;
  const base64 = secret.slice(PREFIX.length);
  if (!BASE64.test(base64)) return null;
  const key = Buffer.from(base64, 'base64');
  return key.length >= 24 && key.length <= 64 ? key : null;
}

const hmac = (key: Buffer, id: string, timestamp: string, body: string | Uint8Array): string =>
  createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');

/**
 * The webhook-signature value for `secrets`, newest first, separated by a space (a rotation's grace signs with
 * both); secrets that are not `whsec_` ones sign nothing here.
 */
export function signStandard(
  secrets: readonly string[],
  id: string,
  timestamp: number | string,
  body: string | Uint8Array,
): string {
  const keys = secrets.map(standardKey).filter((k) => k !== null);
  return keys.map((k) => `v1,${hmac(k, id, String(timestamp), body)}`).join(' ');
}

export interface StandardVerifyOptions {
  /** `whsec_…`, as the webhook was given it. */
  secret: string;
  headers: HeaderInput;
  /** The exact bytes received. */
  rawBody: string | Uint8Array;
  /** Maximum |now - timestamp| in seconds; default 300 (as the libraries). */
  toleranceSeconds?: number;
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

const fail = (reason: VerifyFailure, message: string): VerifyResult => ({ ok: false, reason, message });

/** Verifies the Standard Webhooks headers of a delivery, as the reference libraries do. */
export function verifyStandard(opts: StandardVerifyOptions): VerifyResult {
  const key = standardKey(opts.secret);
  if (!key) throw new TypeError('verifyStandard: secret must be whsec_ and the base64 of 24 to 64 bytes');
  const tolerance = opts.toleranceSeconds ?? 300;
  const id = firstHeader(opts.headers, STANDARD_HEADERS.id);
  const timestamp = firstHeader(opts.headers, STANDARD_HEADERS.timestamp);
  const signature = firstHeader(opts.headers, STANDARD_HEADERS.signature);
  if (!id || !timestamp || !signature) return fail('missing_header', 'a webhook-* header is missing');
  if (!/^\d{1,15}$/.test(timestamp))
    return fail('malformed_timestamp', 'webhook-timestamp must be integer seconds');
  const expected = Buffer.from(hmac(key, id, timestamp, opts.rawBody), 'base64');
  let matched = false;
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) continue;
    const candidate = Buffer.from(value, 'base64');
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched)
    return fail('signature_mismatch', 'webhook-signature does not match the body, id and timestamp');
  const skewMs = (opts.now ?? Date.now)() - Number(timestamp) * 1000;
  if (skewMs > tolerance * 1000)
    return fail('timestamp_too_old', `webhook-timestamp is more than ${tolerance}s old`);
  if (-skewMs > tolerance * 1000) {
    return fail('timestamp_too_new', `webhook-timestamp is more than ${tolerance}s in the future`);
  }
  return { ok: true, eventId: id, timestamp: Number(timestamp) };
}
