/**
 * Hosts of their own on this machine, for the scale bench: network namespaces (`ip netns`), each joined to a bridge
 * in this (the root) namespace by a veth pair, all on a private /24 that no interface here uses yet. The bridge's
 * address is the "database host" (PostgreSQL and the receiver listen on it); a process started in a namespace
 * (`ip netns exec`) reaches them over its veth, as a worker on another machine would over the network. Needs root
 * (CAP_NET_ADMIN and CAP_SYS_ADMIN); everything created is removed by `destroy`.
 */
import { execFileSync } from 'node:child_process';

const ip = (...args: string[]) =>
  execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A /24 in 10.213.0.0/16 that no interface of this machine has an address in. */
function freeSubnet(): string {
  const used = ip('-o', '-4', 'addr', 'show');
  for (let k = 0; k < 256; k++) {
    const third = (process.pid + k) % 256;
    if (!used.includes(` 10.213.${third}.`)) return `10.213.${third}`;
  }
  throw new Error('no free /24 in 10.213.0.0/16');
}

export class HostNetwork {
  /** The bridge's address: the database host, as the namespaces see it. */
  readonly serverAddress: string;
  /** The subnet, CIDR, for pg_hba.conf. */
  readonly cidr: string;
  /** Namespace names, one host each. */
  readonly namespaces: string[] = [];
  readonly #bridge: string;

  private constructor(subnet: string, tag: string) {
    this.serverAddress = `${subnet}.1`;
    this.cidr = `${subnet}.0/24`;
    this.#bridge = `${tag}br`;
  }

  /** `hosts` namespaces at .11, .12, … of a fresh /24, the bridge at .1. */
  static create(hosts: number): HostNetwork {
    // Interface names are at most 15 characters: a short tag from the PID keeps two benches apart.
    const tag = `hb${process.pid % 100_000}`;
    const subnet = freeSubnet();
    const net = new HostNetwork(subnet, tag);
    try {
      ip('link', 'add', net.#bridge, 'type', 'bridge');
      ip('addr', 'add', `${net.serverAddress}/24`, 'dev', net.#bridge);
      ip('link', 'set', net.#bridge, 'up');
      for (let k = 0; k < hosts; k++) {
        const ns = `herald-bench-${process.pid}-${k}`;
        const [outside, inside] = [`${tag}v${k}`, `${tag}p${k}`];
        ip('netns', 'add', ns);
        net.namespaces.push(ns);
        ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', inside);
        ip('link', 'set', inside, 'netns', ns);
        ip('link', 'set', outside, 'master', net.#bridge);
        ip('link', 'set', outside, 'up');
        ip('-n', ns, 'addr', 'add', `${subnet}.${11 + k}/24`, 'dev', inside);
        ip('-n', ns, 'link', 'set', inside, 'up');
        // Herald's worker listens on its own loopback (/healthz, /metrics).
        ip('-n', ns, 'link', 'set', 'lo', 'up');
      }
    } catch (err) {
      net.destroy();
      const stderr = String((err as { stderr?: string }).stderr ?? '').trim();
      throw new Error(`network namespaces: ${stderr || (err as Error).message} (the scale bench needs root)`);
    }
    return net;
  }

  /** Removes the namespaces (their veth ends, and so the pairs, go with them) and the bridge. */
  destroy(): void {
    for (const ns of this.namespaces.splice(0)) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // Already gone.
      }
    }
    try {
      ip('link', 'del', this.#bridge);
    } catch {
      // Never created, or already gone.
    }
  }
}
