/**
 * The broker publishers behind one BrokerPublisher: a target goes to the one its scheme names. Each keeps its own
 * connections (one per broker address), so closing this closes them all.
 */
import type { BrokerTarget } from '../../domain/broker-url.ts';
import type { DestinationPolicy } from '../destination.ts';
import { AmqpPublisher } from './amqp.ts';
import type { Backoff } from './connections.ts';
import { NatsPublisher } from './nats.ts';
import type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.ts';
import { RedisPublisher } from './redis.ts';

export type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.ts';

export interface BrokerPublisherOptions {
  /** The destination guard every connection dials through, reconnects included. */
  destinations: DestinationPolicy;
  /** Close a broker connection no publish has used for this long; default 60 s. */
  idleMs?: number;
  /** TCP connect plus the broker's handshake; default 10 s (CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** Waits between (re)connection attempts; default 250 ms doubling up to 10 s. */
  backoff?: Backoff;
}

export interface Brokers extends BrokerPublisher {
  readonly amqp: AmqpPublisher;
  readonly nats: NatsPublisher;
  readonly redis: RedisPublisher;
}

export function createBrokerPublisher(options: BrokerPublisherOptions): Brokers {
  const shared = {
    destinations: options.destinations,
    connectTimeoutMs: options.connectTimeoutMs,
    pool: { idleMs: options.idleMs, backoff: options.backoff },
  };
  const amqp = new AmqpPublisher(shared);
  const nats = new NatsPublisher(shared);
  const redis = new RedisPublisher(shared);
  return {
    amqp,
    nats,
    redis,
    publish(target: BrokerTarget, message: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer> {
      if (target.kind === 'amqp') return amqp.publish(target, message, timeoutMs);
      if (target.kind === 'nats') return nats.publish(target, message, timeoutMs);
      return redis.publish(target, message, timeoutMs);
    },
    async close(): Promise<void> {
      await Promise.all([amqp.close(), nats.close(), redis.close()]);
    },
  };
}
