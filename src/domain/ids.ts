import { randomBytes } from 'node:crypto';

/** Crockford base32: URL-safe, case-insensitive, no ambiguous letters. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix = 'ins' | 'whk' | 'evt' | 'dlv' | 'msg' | 'med' | 'key' | 'lnk' | 'src';

/**
 * `prefix_` + 10 time characters + 16 random characters (80 bits), ULID-style:
 * unguessable, never reused, and sortable by creation time, which keeps logs readable.
 */
export function newId(prefix: IdPrefix, now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = random16();
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[bytes[i] & 31];
  return `${prefix}_${time}${rand}`;
}

/**
 * 16 fresh random bytes, taken from a pool refilled 4 KiB at a time (as crypto.randomUUID does), not a call to the
 * CSPRNG per id. Each byte is handed out once.
 */
let pool = Buffer.alloc(0);
let offset = 0;
function random16(): Buffer {
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  offset += 16;
  return pool.subarray(offset - 16, offset);
}

/** A random token of `bytes` bytes, base64url: used for API keys and generated secrets. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A generated signing secret: `whsec_` and the base64 of 24 random bytes, as Standard Webhooks' libraries read it. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Lease tokens of one process: a random prefix of its own and a count. Unique among every process's leases, which is
 * all a lease token is for (a result is applied only under the lease it was made with), without a call to the
 * CSPRNG per lease.
 */
export class LeaseTokens {
  /** Every token of this process starts with it and a dot. */
  readonly prefix = randomToken(8);
  #n = 0;

  next(): string {
    return `${this.prefix}.${(this.#n++).toString(36)}`;
  }
}
