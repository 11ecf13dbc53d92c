/**
 * Signed download links for stored media: `${base}/media/{media_id}?expires=&sig=`.
 * `expires` is Unix seconds; `sig` is HMAC-SHA256 over "v1\n{media_id}\n{expires}" (base64url), so neither the id
 * nor the time can be changed without the key. No API key is needed to follow one. Pure: no I/O.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from './secret-box.ts';

/**
 * The link key is derived from the key that seals signing secrets (SECRET_KEY or DATA_DIR/secret.key) with HKDF:
 * every machine of a deployment already shares that key, so a link signed by one verifies on all, and there is
 * no second secret to generate, back up or leak.
 */
export function linkKey(box: SecretBox): Buffer {
  return box.deriveKey('herald media links v1');
}

function signature(key: Buffer, mediaId: string, expires: number): string {
  return createHmac('sha256', key).update(`v1\n${mediaId}\n${expires}`).digest('base64url');
}

export interface SignedLink {
  url: string;
  /** ISO 8601 UTC, whole seconds: the same instant as the link's `expires`. */
  expires_at: string;
}

/** A link valid until `expiresAtMs`, rounded up to the second (a link never dies before it was promised to). */
export function signLink(key: Buffer, baseUrl: string, mediaId: string, expiresAtMs: number): SignedLink {
  const expires = Math.ceil(expiresAtMs / 1000);
  const sig = signature(key, mediaId, expires);
  return {
    url: `${baseUrl}/media/${mediaId}?expires=${expires}&sig=${sig}`,
    expires_at: new Date(expires * 1000).toISOString(),
  };
}

export type LinkCheck = 'ok' | 'forbidden' | 'expired';

/** Forbidden when anything was changed or is missing; expired only for a genuine link past its time. */
export function checkLink(
  key: Buffer,
  mediaId: string,
  expires: string | undefined,
  sig: string | undefined,
  now: number,
): LinkCheck {
  if (!expires || !/^\d{1,15}$/.test(expires) || !sig) return 'forbidden';
  const expected = Buffer.from(signature(key, mediaId, Number(expires)));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forbidden';
  return now >= Number(expires) * 1000 ? 'expired' : 'ok';
}
