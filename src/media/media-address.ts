/**
 * The addresses one media download connects to, resolved once: a URL under a prefix from whatever its name resolves
 * to (the prefix is the operator's permission); any other through the destination guard, without the operator's
 * widening (ALLOW_PRIVATE_DESTINATIONS, ALLOWED_DESTINATION_CIDRS are for webhooks, not for URLs a publisher chose).
 * The connection then goes to exactly those addresses (pinnedLookup): a name that resolves elsewhere by then
 * changes nothing, and a name that gives no address is never a guess.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createGuardedLookup, type Lookup, type LookupFunction } from '../net/destination.ts';

export type Resolved =
  | { kind: 'addresses'; addresses: LookupAddress[] }
  /** The guard refused an address: what it said of it, e.g. "127.0.0.1 is not a globally reachable address (…)". */
  | { kind: 'refused'; why: string }
  /** The name gave no address (or the lookup failed): the code, e.g. ENOTFOUND. */
  | { kind: 'unresolved'; code: string };

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);
const withFamily = (address: string): LookupAddress => ({ address, family: isIP(address) });

/** Every address of `host`, judged by the guard unless `guarded` is false. `lookup` replaces the system resolver. */
export function resolveMedia(host: string, guarded: boolean, lookup?: Lookup): Promise<Resolved> {
  return guarded ? resolveGuarded(host, lookup) : resolveAny(bare(host), lookup);
}

async function resolveAny(host: string, lookup?: Lookup): Promise<Resolved> {
  if (isIP(host)) return { kind: 'addresses', addresses: [withFamily(host)] };
  try {
    const addresses = lookup
      ? (await lookup(host)).map(withFamily)
      : await dnsLookup(host, { all: true, order: 'verbatim' });
    return addresses.length > 0
      ? { kind: 'addresses', addresses }
      : { kind: 'unresolved', code: 'ENOTFOUND' };
  } catch (err) {
    return { kind: 'unresolved', code: (err as { code?: string }).code ?? 'lookup failed' };
  }
}

/** The guard's own lookup (localhost names, every spelling of an address), with no allow-list. */
function resolveGuarded(host: string, lookup?: Lookup): Promise<Resolved> {
  const guard = createGuardedLookup(lookup ? { lookup } : {});
  return new Promise((resolve) => {
    guard(host, { all: true }, (err: (Error & { code?: string }) | null, addresses?: LookupAddress[]) => {
      if (err?.code === 'destination_not_allowed') {
        // The guard's words, without its advice: for media, neither setting it names would let the address through.
        resolve({
          kind: 'refused',
          why: err.message.replace(/^destination_url: /, '').replace(/; .*$/s, ''),
        });
      } else if (err || !addresses || addresses.length === 0) {
        resolve({ kind: 'unresolved', code: err?.code ?? 'ENOTFOUND' });
      } else {
        resolve({ kind: 'addresses', addresses });
      }
    });
  });
}

/** A lookup for the connection that answers the addresses already resolved and checked, asking no resolver again. */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (typeof options === 'function') [options, callback] = [{}, options as typeof callback];
    const all = (options as LookupOptions).all === true;
    const [first] = addresses;
    process.nextTick(() =>
      all ? callback(null, [...addresses]) : callback(null, first.address, first.family),
    );
  };
}
