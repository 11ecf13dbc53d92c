/**
 * How a broker connection goes where the destination guard said: its client dials through the guard at every
 * connection, its own reconnects included. amqp and Redis take the guard as their socket's `lookup`, so the socket
 * connects to the addresses the guard resolved and approved while the broker's name stays the TLS server name
 * (SNI, and the name the certificate is verified against); NATS is given the approved addresses and its reconnect
 * loop dials through the guard (nats.ts). A name the guard refuses, or that gives no address, is never dialled.
 *
 * A pin remembers the guard's last verdict, because a client reports only some of its failed reconnects: an attempt
 * made while the guard refuses the broker's address answers with that refusal.
 */
import { isIP } from 'node:net';
import {
  type ConnectPolicy,
  createGuardedLookup,
  DestinationRefused,
  guardedAddresses,
  HostUnresolved,
  type LookupFunction,
} from '../destination.ts';

const guardError = (err: unknown): DestinationRefused | HostUnresolved | null =>
  err instanceof DestinationRefused || err instanceof HostUnresolved ? err : null;

export class Pin {
  readonly host: string;
  readonly #policy: ConnectPolicy;
  /** The socket's lookup: the guard, its verdict kept. */
  readonly lookup: LookupFunction;
  /** Why the guard gave the last dial no address (a refusal, or the name unresolved); null once it approved one. */
  refusal: DestinationRefused | HostUnresolved | null = null;

  constructor(host: string, policy: ConnectPolicy) {
    this.host = host;
    this.#policy = policy;
    const guarded = createGuardedLookup(policy);
    this.lookup = (hostname, options, callback) =>
      guarded(hostname, options, (err, ...answer) => {
        this.refusal = guardError(err);
        callback(err, ...answer);
      });
  }

  /** Every address the guard approves for the broker now (an IP literal judged as it is); throws its refusal. */
  async addresses(): Promise<string[]> {
    try {
      const found = await guardedAddresses(this.host, this.#policy);
      this.refusal = null;
      return found.map((a) => a.address);
    } catch (err) {
      this.refusal = guardError(err);
      throw err;
    }
  }

  /** A socket never asks its lookup about an IP literal: such a host is judged here, before the client dials it. */
  async checkLiteral(): Promise<void> {
    if (isIP(this.host)) await this.addresses();
  }

  /** The name TLS sends and verifies the certificate against; none for an IP literal (verified as that address). */
  get serverName(): string | undefined {
    return isIP(this.host) ? undefined : this.host;
  }
}
