/**
 * The broker side of bench:brokers, on the machine's shared brokers (RabbitMQ 5672, NATS JetStream 4222, Redis
 * 6379): a destination of the bench's own per leg (a durable queue, a file-storage stream, a stream key), named per
 * run, counted on the broker (a passive queue.declare's message count, the stream's message count, XLEN) and
 * removed afterwards. The brokers themselves are never stopped or reconfigured.
 */
import { randomBytes } from 'node:crypto';
import { type JetStreamManager, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';

export type BrokerKind = 'amqp' | 'nats' | 'redis';
export const BROKER_KINDS: BrokerKind[] = ['amqp', 'nats', 'redis'];
export const BROKER_LABEL: Record<BrokerKind, string> = {
  amqp: 'RabbitMQ',
  nats: 'NATS JetStream',
  redis: 'Redis Streams',
};
export const BROKER_PORT: Record<BrokerKind, number> = { amqp: 5672, nats: 4222, redis: 6379 };
export const BROKER_HOST = '127.0.0.1';

/** Where a leg publishes: what the raw client needs (broker-raw.ts), and the URL a Herald webhook is given. */
export interface Where {
  kind: BrokerKind;
  /** The queue (AMQP, default exchange), the subject (NATS) or the stream key (Redis). */
  name: string;
  url: string;
}

export interface Destination extends Where {
  /** Messages in the destination now, as the broker counts them. */
  count(): Promise<number>;
  remove(): Promise<void>;
}

const redisClient = () => createClient({ socket: { host: BROKER_HOST, port: BROKER_PORT.redis }, RESP: 2 });

/** The bench's own admin clients on the three brokers, and the destinations it made with them. */
export class BrokerAdmin {
  readonly run = randomBytes(4).toString('hex');
  readonly #rabbit: Connection;
  readonly #nats: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #redis: ReturnType<typeof redisClient>;
  readonly #made = new Set<Destination>();
  #n = 0;

  private constructor(
    rabbit: Connection,
    nats: NatsConnection,
    jsm: JetStreamManager,
    redis: ReturnType<typeof redisClient>,
  ) {
    this.#rabbit = rabbit;
    this.#nats = nats;
    this.#jsm = jsm;
    this.#redis = redis;
  }

  static async connect(): Promise<BrokerAdmin> {
    const rabbit = new Connection({
      hostname: BROKER_HOST,
      port: BROKER_PORT.amqp,
      username: 'guest',
      password: 'guest',
      connectionName: 'herald-bench-admin',
    });
    rabbit.on('error', () => {});
    await rabbit.onConnect(5_000);
    const nats = await connect({ servers: `${BROKER_HOST}:${BROKER_PORT.nats}`, name: 'herald-bench-admin' });
    const redis = redisClient();
    redis.on('error', () => {});
    await redis.connect();
    return new BrokerAdmin(rabbit, nats, await jetstreamManager(nats), redis);
  }

  /** A fresh, empty destination of `kind` for one leg (`what`: raw or herald). */
  async destination(kind: BrokerKind, what: string): Promise<Destination> {
    const name = `herald-bench-${this.run}-${++this.#n}-${what}`;
    const d =
      kind === 'amqp'
        ? await this.#queue(name)
        : kind === 'nats'
          ? await this.#stream(name)
          : this.#key(name);
    this.#made.add(d);
    const remove = d.remove;
    d.remove = async () => {
      this.#made.delete(d);
      await remove();
    };
    return d;
  }

  /** A durable classic queue, reached through the default exchange (its name as routing key). */
  async #queue(queue: string): Promise<Destination> {
    await this.#rabbit.queueDeclare({ queue, durable: true });
    return {
      kind: 'amqp',
      name: queue,
      url: `amqp://guest:guest@${BROKER_HOST}:${BROKER_PORT.amqp}/%2F?exchange=&routing_key=${queue}`,
      count: async () => (await this.#rabbit.queueDeclare({ queue, passive: true })).messageCount,
      remove: async () => {
        await this.#rabbit.queueDelete({ queue });
      },
    };
  }

  /** A stream on file storage covering the leg's subject. */
  async #stream(name: string): Promise<Destination> {
    const stream = name.replaceAll('-', '_').toUpperCase();
    const subject = `${name.replaceAll('-', '.')}.events`;
    await this.#jsm.streams.add({ name: stream, subjects: [subject], storage: StorageType.File });
    return {
      kind: 'nats',
      name: subject,
      url: `nats://${BROKER_HOST}:${BROKER_PORT.nats}/${subject}`,
      count: async () => (await this.#jsm.streams.info(stream)).state.messages,
      remove: async () => {
        await this.#jsm.streams.delete(stream);
      },
    };
  }

  #key(name: string): Destination {
    const key = name.replaceAll('-', ':');
    return {
      kind: 'redis',
      name: key,
      url: `redis://${BROKER_HOST}:${BROKER_PORT.redis}/0?stream=${encodeURIComponent(key)}`,
      count: () => this.#redis.xLen(key),
      remove: async () => {
        await this.#redis.del(key);
      },
    };
  }

  /** Removes what is left of this run's destinations, then closes the clients. */
  async close(): Promise<void> {
    for (const d of [...this.#made]) await d.remove().catch(() => {});
    await this.#rabbit.close().catch(() => {});
    await this.#nats.close().catch(() => {});
    await this.#redis.close().catch(() => {});
  }
}
