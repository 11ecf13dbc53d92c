/**
 * Evolution API's webhook token: with `headers: { jwt_key: <key> }` in an instance's webhook, Evolution sends
 * `Authorization: Bearer <JWT>` that it signs with that key (HS256, `{ iat, exp: iat + 600, app, action }`). Pure:
 * the caller opens the stored key and says what time it is. Verified with node:crypto: HS256 alone is a dozen
 * lines, and refusing every other `alg` (none, RS256 with a public key as the secret…) is the point.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** A bearer token shaped as a JWT (three base64url parts), not one of Herald's keys. */
export function isJwt(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => SEGMENT.test(p));
}

function json(part: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** Why `token` is not a live HS256 token signed with `key`, in words; null when it is. `nowS`: seconds. */
export function checkEngineJwt(key: string, token: string, nowS: number): string | null {
  const [head, body, signature] = token.split('.');
  const header = json(head);
  if (header === null) return 'Authorization: the token is not a JWT';
  if (header.alg !== 'HS256') return 'Authorization: the token must be signed with HS256';
  const expected = createHmac('sha256', key).update(`${head}.${body}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return "Authorization: the token is not signed with this instance's engine HMAC key";
  }
  const claims = json(body);
  if (claims === null || typeof claims.exp !== 'number')
    return 'Authorization: the token must say when it expires (exp)';
  if (claims.exp <= nowS) return 'Authorization: the token has expired';
  if (typeof claims.nbf === 'number' && claims.nbf > nowS) return 'Authorization: the token is not valid yet';
  return null;
}
