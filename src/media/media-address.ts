/**
 * The addresses one media download connects to, resolved once: a URL under a prefix from whatever its name resolves
 * to (the prefix is the operator's permission); any other through the destination guard, without the operator's
 * widening (ALLOW_PRIVATE_DESTINATIONS, ALLOWED_DESTINATION_CIDRS are for webhooks, not for URLs a publisher chose).
 * The connection then goes to exactly those addresses (pinnedLookup): a name that resolves elsewhere by then
 * changes nothing, and a name that gives no address is never a guess.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import {
  DestinationRefused,
  guardedAddresses,
  HostUnresolved,
  type Lookup,
  type LookupFunction,
  resolve,
} from '../net/destination.ts';

export type Resolved =
  | { kind: 'addresses'; addresses: LookupAddress[] }
  /** The guard refused an address: what it said of it, e.g. "127.0.0.1 is not a globally reachable address (…)". */
  | { kind: 'refused'; why: string }
  /** The name gave no address (or the lookup failed): the code, e.g. ENOTFOUND. */
  | { kind: 'unresolved'; code: string };

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/**
 * Every address of `host`: through the guard's own judgement (localhost names, every spelling of an address) with no
 * allow-list when `guarded`, else as it resolves. `lookup` replaces the system resolver.
 */
export async function resolveMedia(host: string, guarded: boolean, lookup?: Lookup): Promise<Resolved> {
  const name = bare(host);
  try {
    const addresses = guarded
      ? await guardedAddresses(host, { lookup })
      : isIP(name)
        ? [{ address: name, family: isIP(name) }]
        : await resolve(name, lookup);
    return { kind: 'addresses', addresses };
  } catch (err) {
    // The guard's words, without its advice: for media, neither setting it names would let the address through.
    if (err instanceof DestinationRefused) {
      return { kind: 'refused', why: err.message.replace(/^destination_url: /, '').replace(/; .*$/s, '') };
    }
    if (err instanceof HostUnresolved) return { kind: 'unresolved', code: err.code };
    throw err;
  }
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
