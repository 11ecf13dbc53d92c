/**
 * SSRF guard for webhook destinations: which URLs Herald may be told to send to.
 * Checked once at save time (checkDestination) and again at every connection (createGuardedLookup, guardedAddresses),
 * because DNS answers can change between the two. At a connection the guard resolves the name itself and the socket
 * goes to the very addresses it approved; a name that gives no address there is a failed attempt, never an allowed one.
 */

import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookupAsync } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { isBrokerUrlProblem, parseBrokerUrl } from '../domain/broker-url.ts';
import { destinationKind } from '../domain/destination-kind.ts';
import type { AddressAllowList } from './address-allow-list.ts';

export type DestinationProblem = {
  field: 'destination_url';
  code: 'invalid_request' | 'destination_not_allowed';
  message: string;
};
export type Lookup = (hostname: string) => Promise<string[]>;
export interface DestinationPolicy {
  allowPrivate: boolean;
  /** ALLOWED_DESTINATION_CIDRS: addresses let through although not public. */
  allow?: AddressAllowList;
  /** Resolver; the system's (dns.lookup) when absent. Tests inject one to rebind names. */
  lookup?: Lookup;
}
/** The policy as a connection applies it; without allowPrivate, only public or allow-listed addresses pass. */
export type ConnectPolicy = Omit<DestinationPolicy, 'allowPrivate'> & { allowPrivate?: boolean };

/** The guard refused an address (or a localhost name): nothing is sent, and retrying would be refused the same way. */
export class DestinationRefused extends Error {
  readonly code = 'destination_not_allowed';
  constructor(reason: string) {
    super(`destination_url: ${reason}`);
  }
}

/**
 * The name gave no address to connect to (the lookup failed, timed out or came back empty): no connection is made.
 * Unlike a refusal this is a failed attempt that is retried, as a name that does not resolve now may resolve later.
 * `code` is the resolver's (ENOTFOUND, EAI_AGAIN, …), ENOTFOUND when it gave none.
 */
export class HostUnresolved extends Error {
  readonly code: string;
  readonly hostname: string;
  constructor(hostname: string, cause?: unknown) {
    const c = cause as { code?: unknown; message?: unknown } | undefined;
    const reason = typeof c?.message === 'string' && c.message !== '' ? c.message : 'the name has no address';
    super(`could not resolve ${hostname}: ${reason}`, cause === undefined ? undefined : { cause });
    this.code = typeof c?.code === 'string' ? c.code : 'ENOTFOUND';
    this.hostname = hostname;
  }
}

const MAX_LENGTH = 2048;

// Two lists on purpose: a BlockList matches IPv4 addresses against IPv6 rules via ::ffff:a.b.c.d,
// so ::/8 in a shared list would refuse every IPv4 address.
/** Each range with what it is, so a refusal can say why: "loopback, 127.0.0.0/8". */
const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, '"this network"'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local, where cloud metadata services live'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  // Other special-purpose blocks that no webhook receiver lives in either:
  ['192.0.2.0', 24, 'documentation'], // TEST-NET-1
  ['192.88.99.0', 24, 'deprecated 6to4 relay'],
  ['198.51.100.0', 24, 'documentation'], // TEST-NET-2
  ['203.0.113.0', 24, 'documentation'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // also covers 255.255.255.255
];
const V6_RANGES: [string, number, string][] = [
  ['::', 8, 'unspecified, loopback or IPv4-compatible'], // includes ::/128, ::1 and ::a.b.c.d
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
  ['100::', 64, 'discard-only'],
  ['64:ff9b:1::', 48, 'local-use NAT64'], // translated by a private network's own gateway
  ['2001::', 32, 'Teredo'], // the tunnelled address is obfuscated, so it cannot be judged
  ['2001:2::', 48, 'benchmarking'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
];
// Two lists on purpose: a BlockList matches IPv4 addresses against IPv6 rules via ::ffff:a.b.c.d,
// so ::/8 in a shared list would refuse every IPv4 address.
const blockList = (ranges: [string, number, string][], type: 'ipv4' | 'ipv6') => {
  const list = new BlockList();
  for (const [net, prefix] of ranges) list.addSubnet(net, prefix, type);
  return list;
};
const blockedV4 = blockList(V4_RANGES, 'ipv4');
const blockedV6 = blockList(V6_RANGES, 'ipv6');

/** What a refused address is, e.g. "loopback, 127.0.0.0/8" (only called for a refused one). */
function rangeOf(ip: string): string {
  const bare = ip.split('%')[0];
  const v4 = isIP(bare) === 4 ? bare : carriedIPv4(bare);
  const [ranges, type, address] =
    v4 !== null ? [V4_RANGES, 'ipv4' as const, v4] : [V6_RANGES, 'ipv6' as const, bare];
  const found = ranges.find((r) => blockList([r], type).check(address, type));
  return found ? `${found[2]}, ${found[0]}/${found[1]}` : 'not public';
}

/** How an operator lets such an address through, said in every refusal. */
const HOW_TO_ALLOW =
  'to send to it, set ALLOW_PRIVATE_DESTINATIONS=true (development) or add it to ALLOWED_DESTINATION_CIDRS';

const notPublic = (what: string, ip: string) =>
  `${what} is not a globally reachable address (${rangeOf(ip)}); ${HOW_TO_ALLOW}`;

/** localhost is refused even with ALLOW_PRIVATE_DESTINATIONS: the name is this machine, whatever it resolves to. */
const localhostRefusal = (host: string) =>
  `${host} is never allowed (it names Herald's own machine); use its address, e.g. 127.0.0.1, with ` +
  'ALLOW_PRIVATE_DESTINATIONS=true or ALLOWED_DESTINATION_CIDRS';

const problem = (code: DestinationProblem['code'], message: string): DestinationProblem => ({
  field: 'destination_url',
  code,
  message: `destination_url: ${message}`,
});

/** Syntax rules only (absolute http/https, ≤2048 chars, no userinfo). Returns null when fine. */
export function checkDestinationSyntax(raw: unknown): DestinationProblem | null {
  if (typeof raw !== 'string') return problem('invalid_request', 'must be a string');
  if (raw.length > MAX_LENGTH) return problem('invalid_request', `at most ${MAX_LENGTH} characters`);
  // Demand a literal "scheme://host": WHATWG would also accept `http:host`, `http:\\host` or `http:///host`.
  const match = /^https?:\/\/([^/\\?#]+)/i.exec(raw);
  if (!match || !URL.canParse(raw)) {
    return problem('invalid_request', 'must be an absolute http or https URL');
  }
  // Any '@' in the authority is userinfo, even an empty one (`http://@host/`) that URL drops silently.
  const url = new URL(raw);
  if (match[1].includes('@') || url.username || url.password) {
    return problem('invalid_request', 'must not contain user information');
  }
  return null;
}

/** IPv6 text (already validated by isIP, no zone) to its eight 16-bit groups. */
function hextets(ip: string): number[] {
  const groups = (s: string): number[] =>
    s === ''
      ? []
      : s.split(':').flatMap((g) => {
          if (!g.includes('.')) return [Number.parseInt(g, 16)];
          const [a, b, c, d] = g.split('.').map(Number);
          return [(a << 8) | b, (c << 8) | d];
        });
  const gap = ip.indexOf('::');
  if (gap === -1) return groups(ip);
  const head = groups(ip.slice(0, gap));
  const tail = groups(ip.slice(gap + 2));
  return [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail];
}

/**
 * The IPv4 address an IPv6 address reaches: IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) carry it in
 * their last 32 bits, 6to4 (2002::/16) in bits 16 to 47. Null for every other IPv6 address.
 */
function carriedIPv4(ip: string): string | null {
  const h = hextets(ip);
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if ((zeros(0, 5) && h[5] === 0xffff) || (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6))) {
    return v4(h[6], h[7]);
  }
  if (h[0] === 0x2002) return v4(h[1], h[2]);
  return null;
}

/** True when an IP literal (v4 or v6, any canonical form, no brackets) is globally reachable. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return !blockedV4.check(ip, 'ipv4');
  if (family !== 6) return false; // not an IP literal: fail closed
  const bare = ip.split('%')[0]; // a zone id does not change where the address points
  const v4 = carriedIPv4(bare);
  if (v4 !== null) return isPublicAddress(v4);
  return !blockedV6.check(bare, 'ipv6');
}

/** Public, or inside the operator's allow-list (an IPv6 address that carries an IPv4 one is judged by either). */
export function isAllowedAddress(ip: string, allow?: AddressAllowList): boolean {
  if (isPublicAddress(ip)) return true;
  if (!allow || allow.empty) return false;
  const bare = ip.split('%')[0];
  if (allow.has(bare)) return true;
  const v4 = isIP(bare) === 6 ? carriedIPv4(bare) : null;
  return v4 !== null && allow.has(v4);
}

/**
 * One canonical spelling of a host: no brackets, lowercase, IDNA full stops and IPv4 short/hex/octal
 * forms folded (domainToASCII runs the WHATWG host parser), trailing dots dropped.
 */
function normaliseHost(host: string): string {
  const inner = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(inner)) return inner;
  return (domainToASCII(inner) || inner.toLowerCase()).replace(/\.+$/, '');
}

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Full check at save time: syntax (a broker's URL by its own rules, broker-url.ts), then host literal / localhost
 * names / resolved addresses of the host (the broker's too). Null when allowed.
 */
export async function checkDestination(
  raw: unknown,
  policy: DestinationPolicy,
): Promise<DestinationProblem | null> {
  let host: string;
  // Any scheme but http's is read by the brokers' rules, which name an unknown one.
  if (typeof raw === 'string' && destinationKind(raw) !== 'http') {
    const broker = parseBrokerUrl(raw);
    if (isBrokerUrlProblem(broker)) return broker;
    host = normaliseHost(broker.host);
  } else {
    const syntax = checkDestinationSyntax(raw);
    if (syntax) return syntax;
    host = normaliseHost(new URL(raw as string).hostname);
  }
  // localhost names are refused even when private destinations are allowed.
  if (isLocalhostName(host)) return problem('destination_not_allowed', localhostRefusal(host));
  if (policy.allowPrivate) return null;
  try {
    await guardedAddresses(host, policy);
    return null;
  } catch (err) {
    if (err instanceof DestinationRefused) return problem('destination_not_allowed', reasonOf(err));
    // Unresolvable now is accepted when saved: the guard judges the answer again at every connection.
    return null;
  }
}

const reasonOf = (err: DestinationRefused) => err.message.replace(/^destination_url: /, '');

/**
 * The addresses a connection to `hostname` may use, judged now: an IP literal as it is, a name through the resolver.
 * Throws DestinationRefused for a localhost name or any address the policy refuses (one bad address refuses the
 * name: the socket might pick it), HostUnresolved when the name gives no address. `options` go to dns.lookup.
 */
export async function guardedAddresses(
  hostname: string,
  policy: ConnectPolicy = {},
  options: LookupOptions = {},
): Promise<LookupAddress[]> {
  const host = normaliseHost(hostname);
  if (isLocalhostName(host)) throw new DestinationRefused(localhostRefusal(host));
  const family = isIP(host);
  if (family) {
    if (!policy.allowPrivate && !isAllowedAddress(host, policy.allow))
      throw new DestinationRefused(notPublic(host, host));
    return [{ address: host, family }];
  }
  const addresses = await resolve(host, policy.lookup, options);
  const bad = policy.allowPrivate
    ? undefined
    : addresses.find((a) => !isAllowedAddress(a.address, policy.allow));
  if (bad) throw new DestinationRefused(notPublic(`${host} resolves to ${bad.address}, which`, bad.address));
  return addresses;
}

/** Every address of a name, by the injected resolver or the system's; HostUnresolved when there is none. */
export async function resolve(
  host: string,
  lookup: Lookup | undefined,
  options: LookupOptions = {},
): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  try {
    if (lookup) {
      const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
      addresses = (await lookup(host))
        .map((address) => ({ address, family: isIP(address) }))
        .filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
    } else {
      addresses = await dnsLookupAsync(host, { order: 'verbatim', ...options, all: true });
    }
  } catch (err) {
    throw new HostUnresolved(host, err);
  }
  if (addresses.length === 0) throw new HostUnresolved(host);
  return addresses;
}

// biome-ignore lint/suspicious/noExplicitAny: mirrors the callback type of dns.lookup, which varies with options.all
export type LookupFunction = (hostname: string, options: object, callback: (...args: any[]) => void) => void;

/**
 * A lookup function with the signature of net/dns `lookup(hostname, options, callback)` for a socket's `lookup`
 * option (undici's `connect: { lookup }`, net.connect, tls.connect): the guard resolves the name (guardedAddresses)
 * and the socket connects to the addresses it approved, at every connection, so a name rebound after the check
 * changes nothing. Honours `options.all` and the single-address form; fails with DestinationRefused (code
 * 'destination_not_allowed') or HostUnresolved. IP literals never reach a socket's lookup: judge them before.
 */
export function createGuardedLookup(policy: ConnectPolicy = {}): LookupFunction {
  return (hostname, options, callback) => {
    // Tolerate the two-argument form lookup(hostname, callback) and the legacy numeric family.
    if (typeof options === 'function') [options, callback] = [{}, options as typeof callback];
    const opts: LookupOptions = typeof options === 'number' ? { family: options } : { ...options };
    // Answered on a later tick, outside the promise: a callback that throws must not become a lost rejection.
    guardedAddresses(hostname, policy, opts).then(
      (addresses) =>
        process.nextTick(() =>
          opts.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family),
        ),
      (err) => process.nextTick(callback, err),
    );
  };
}

/** The guard with the system resolver and no allow-list. */
export const guardedLookup: LookupFunction = createGuardedLookup();
