/**
 * Verification of Herald's signed deliveries, for use in a receiver's own code.
 * Depends only on Node's built-ins and signature.ts.
 */
import { timingSafeEqual } from 'node:crypto';
import { HEADERS, SIGNATURE_VERSION, sign } from './signature.ts';

const EVENT_ID_HEADER = HEADERS.eventId;
const TIMESTAMP_HEADER = HEADERS.timestamp;
const SIGNATURE_HEADER = HEADERS.signature;
const DEFAULT_TOLERANCE_SECONDS = 300;
const SIGNATURE_PREFIX = `${SIGNATURE_VERSION}=`;
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

export type VerifyFailure =
  | 'missing_header'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'malformed_timestamp';

export type VerifyResult =
  | { ok: true; eventId: string; timestamp: number }
  | { ok: false; reason: VerifyFailure; message: string };

export type HeaderInput = Record<string, string | string[] | undefined> | Headers;

export interface VerifyOptions {
  secret: string;
  headers: HeaderInput;
  /** The exact bytes received. A re-serialized parsed body will not verify. */
  rawBody: string | Uint8Array;
  /** Maximum |now - timestamp| in seconds; default 300. Exactly the tolerance is accepted. */
  toleranceSeconds?: number;
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

/** All values of a header, case-insensitively; repeated headers yield several values. */
function headerValues(headers: HeaderInput, name: string): string[] {
  // Duck-typed rather than instanceof so undici's and other fetch implementations' Headers work too.
  if (typeof (headers as Headers).get === 'function') {
    const value = (headers as Headers).get(name);
    return value === null ? [] : [value];
  }
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    if (Array.isArray(value)) values.push(...value);
    else values.push(value);
  }
  return values;
}

/** The first value of a header, trimmed, or undefined when absent or empty. */
export function firstHeader(headers: HeaderInput, name: string): string | undefined {
  const value = headerValues(headers, name)[0]?.trim();
  return value ? value : undefined;
}

function fail(reason: VerifyFailure, message: string): VerifyResult {
  return { ok: false, reason, message };
}

export function verify(opts: VerifyOptions): VerifyResult {
  const { secret, headers, rawBody } = opts;
  const toleranceSeconds = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = opts.now ?? Date.now;
  // Misconfiguration is a programming error, not a property of the request: throw rather than reject.
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('verify: secret must be a non-empty string');
  }
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new RangeError('verify: toleranceSeconds must be a non-negative finite number');
  }

  const eventId = firstHeader(headers, EVENT_ID_HEADER);
  const timestampRaw = firstHeader(headers, TIMESTAMP_HEADER);
  const signatureRaw = headerValues(headers, SIGNATURE_HEADER).join(' ').trim();
  if (eventId === undefined) return fail('missing_header', 'X-Service-Event-Id header is missing');
  if (timestampRaw === undefined) return fail('missing_header', 'X-Service-Timestamp header is missing');
  if (signatureRaw === '') return fail('missing_header', 'X-Service-Signature header is missing');

  // Integer seconds only: Number() alone would also accept '1e9', '0x10', ' 12 ' etc.
  if (!/^\d{1,15}$/.test(timestampRaw)) {
    return fail('malformed_timestamp', 'X-Service-Timestamp must be integer seconds since the epoch');
  }
  const timestamp = Number(timestampRaw);

  // Several values allow secret rotation. Commas are separators too because Headers.get() joins repeats with ', '.
  // Entries of other versions are skipped so a future sender can add e.g. v2= alongside v1=.
  const candidates: Buffer[] = [];
  for (const entry of signatureRaw.split(/[\s,]+/)) {
    if (!entry.startsWith(SIGNATURE_PREFIX)) continue;
    const hex = entry.slice(SIGNATURE_PREFIX.length);
    if (HEX_SHA256.test(hex)) candidates.push(Buffer.from(hex, 'hex'));
  }
  if (candidates.length === 0) {
    return fail('malformed_signature', `X-Service-Signature has no ${SIGNATURE_PREFIX}<64 hex chars> value`);
  }

  // Sign the header text as received, so the bytes compared are exactly what the sender signed.
  const expected = Buffer.from(sign(secret, timestampRaw, rawBody).slice(SIGNATURE_PREFIX.length), 'hex');
  let matched = false;
  for (const candidate of candidates) {
    // Both are 32 bytes (enforced by HEX_SHA256), as timingSafeEqual requires; no early exit on a match.
    if (timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched)
    return fail('signature_mismatch', 'X-Service-Signature does not match the body and timestamp');

  // Checked after the signature so the age is only reported for authentic (e.g. replayed) requests.
  const skewMs = now() - timestamp * 1000;
  if (skewMs > toleranceSeconds * 1000) {
    return fail('timestamp_too_old', `X-Service-Timestamp is more than ${toleranceSeconds}s in the past`);
  }
  if (-skewMs > toleranceSeconds * 1000) {
    return fail('timestamp_too_new', `X-Service-Timestamp is more than ${toleranceSeconds}s in the future`);
  }
  return { ok: true, eventId, timestamp };
}
