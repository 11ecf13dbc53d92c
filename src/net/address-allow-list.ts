/**
 * The operator's allow-list of CIDRs (ALLOWED_DESTINATION_CIDRS): private addresses that the destination guard
 * lets through, narrowly, where ALLOW_PRIVATE_DESTINATIONS would open everything.
 */
import { BlockList, isIP } from 'node:net';

export interface Cidr {
  address: string;
  prefix: number;
  family: 4 | 6;
}

/** The rule a bad entry breaks, for the configuration error. */
export const CIDR_RULE = 'must be comma-separated CIDRs such as "10.1.0.0/16,fd00::/8"';

/** "10.1.0.0/16, fd00::/8" → Cidrs; a bare address counts as one host (/32, /128). Throws naming the bad entry. */
export function parseCidrList(text: string): Cidr[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const [address, prefixText, extra] = entry.split('/');
      const family = isIP(address);
      const max = family === 6 ? 128 : 32;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (
        (family !== 4 && family !== 6) ||
        extra !== undefined ||
        (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) ||
        prefix > max
      ) {
        throw new Error(`${CIDR_RULE}; "${entry}" is not one`);
      }
      return { address, prefix, family };
    });
}

export class AddressAllowList {
  readonly cidrs: readonly Cidr[];
  // Two lists, as in the guard: a BlockList matches IPv4 queries against IPv6 rules through ::ffff:a.b.c.d.
  readonly #v4 = new BlockList();
  readonly #v6 = new BlockList();

  constructor(cidrs: readonly Cidr[]) {
    this.cidrs = cidrs;
    for (const c of cidrs) {
      if (c.family === 4) this.#v4.addSubnet(c.address, c.prefix, 'ipv4');
      else this.#v6.addSubnet(c.address, c.prefix, 'ipv6');
    }
  }

  get empty(): boolean {
    return this.cidrs.length === 0;
  }

  /** True when the IP literal (no brackets, no zone) lies in one of the CIDRs. */
  has(ip: string): boolean {
    const family = isIP(ip);
    if (family === 4) return this.#v4.check(ip, 'ipv4');
    if (family === 6) return this.#v6.check(ip, 'ipv6');
    return false;
  }
}
