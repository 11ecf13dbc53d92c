/**
 * The broker side of Herald's broker-destination fault tests, on the machine's shared brokers (RabbitMQ 5672, NATS
 * JetStream 4222, Redis 6379): a destination of the test's own per kind (a queue, a stream, a key, named per run and
 * removed afterwards) with a consumer that counts every event id it read, and a TCP proxy that can hold back the
 * broker's answers (acks, confirms, entry ids) while letting Herald's publishes through. The brokers themselves are
 * never stopped.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import { eventually, messagePayload } from './herald.ts';

/** One call of Herald's API, in process (TestHerald) or as a child (ChildHerald). */
export type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export type Kind = 'amqp' | 'nats' | 'redis';
export const KINDS: Kind[] = ['amqp', 'nats', 'redis'];
export const BROKER_PORTS: Record<Kind, number> = { amqp: 5672, nats: 4222, redis: 6379 };

const redisClient = () => createClient({ socket: { host: '127.0.0.1', port: 6379 } });

export interface Destination {
  kind: Kind;
  /** The webhook's destination_url, through `port` (a proxy's) or straight to the broker. */
  url(port?: number): string;
  /** Every event id read from the destination so far, with how many times it was read. */
  read(): Promise<Map<string, number>>;
  /** Removes the queue, stream or key. */
  remove(): Promise<void>;
}

/** Clients of the test's own on the three brokers, and the destinations it made with them. */
export class BrokerClients {
  readonly run = randomBytes(4).toString('hex');
  readonly rabbit: Connection;
  readonly nats: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly redis: ReturnType<typeof redisClient>;
  readonly #made: Destination[] = [];
  #n = 0;

  private constructor(
    rabbit: Connection,
    nats: NatsConnection,
    jsm: JetStreamManager,
    redis: ReturnType<typeof redisClient>,
  ) {
    this.rabbit = rabbit;
    this.nats = nats;
    this.jsm = jsm;
    this.redis = redis;
  }

  static async connect(): Promise<BrokerClients> {
    const rabbit = new Connection({
      hostname: '127.0.0.1',
      port: 5672,
      username: 'guest',
      password: 'guest',
    });
    rabbit.on('error', () => {});
    await rabbit.onConnect(5_000);
    const nats = await connect({ servers: '127.0.0.1:4222' });
    const redis = redisClient();
    redis.on('error', () => {});
    await redis.connect();
    return new BrokerClients(rabbit, nats, await jetstreamManager(nats), redis);
  }

  /** A fresh destination of `kind`; `maxlen` applies to Redis only. */
  async destination(kind: Kind, options: { maxlen?: number } = {}): Promise<Destination> {
    const name = `herald-faults-${this.run}-${++this.#n}`;
    const d =
      kind === 'amqp'
        ? await this.#queue(name)
        : kind === 'nats'
          ? await this.#stream(name)
          : this.#key(name, options);
    this.#made.push(d);
    return d;
  }

  async #queue(queue: string): Promise<Destination> {
    await this.rabbit.queueDeclare({ queue, durable: true });
    const seen = new Map<string, number>();
    const consumer = this.rabbit.createConsumer(
      { queue, noAck: true, queueOptions: { durable: true } },
      (m) => {
        const id = String(m.messageId);
        seen.set(id, (seen.get(id) ?? 0) + 1);
      },
    );
    return {
      kind: 'amqp',
      url: (port = 5672) => `amqp://guest:guest@127.0.0.1:${port}/%2F?exchange=&routing_key=${queue}`,
      read: async () => seen,
      remove: async () => {
        await consumer.close();
        await this.rabbit.queueDelete({ queue });
      },
    };
  }

  async #stream(name: string): Promise<Destination> {
    const stream = name.replaceAll('-', '_').toUpperCase();
    const subject = name.replaceAll('-', '.');
    await this.jsm.streams.add({ name: stream, subjects: [`${subject}.>`] });
    const seen = new Map<string, number>();
    let next = 1;
    return {
      kind: 'nats',
      url: (port = 4222) => `nats://127.0.0.1:${port}/${subject}.events`,
      read: async () => {
        const last = (await this.jsm.streams.info(stream)).state.last_seq;
        for (; next <= last; next++) {
          const m = await this.jsm.streams.getMessage(stream, { seq: next });
          const id = m?.header?.get('Nats-Msg-Id');
          if (id) seen.set(id, (seen.get(id) ?? 0) + 1);
        }
        return seen;
      },
      remove: () => this.jsm.streams.delete(stream).then(() => {}),
    };
  }

  #key(name: string, options: { maxlen?: number }): Destination {
    const key = name.replaceAll('-', ':');
    const seen = new Map<string, number>();
    let last = '';
    const maxlen = options.maxlen ? `&maxlen=${options.maxlen}` : '';
    return {
      kind: 'redis',
      url: (port = 6379) => `redis://127.0.0.1:${port}/0?stream=${encodeURIComponent(key)}${maxlen}`,
      read: async () => {
        const entries = (await this.redis.xRange(key, last ? `(${last}` : '-', '+')) as unknown as {
          id: string;
          message: Record<string, string>;
        }[];
        for (const e of entries) {
          seen.set(e.message.event_id, (seen.get(e.message.event_id) ?? 0) + 1);
          last = e.id;
        }
        return seen;
      },
      remove: () => this.redis.del(key).then(() => {}),
    };
  }

  async close(): Promise<void> {
    for (const d of this.#made) await d.remove().catch(() => {});
    await Promise.all([this.rabbit.close(), this.nats.close(), this.redis.quit()]);
  }
}

/**
 * Publishes `count` message events, `parallel` at a time; each 202's event id goes into `acked`. `before(i)` runs
 * before the i-th (1-based). A worker stops quietly when Herald cannot be reached (it was killed).
 */
export async function publishMany(
  api: Api,
  ins: string,
  count: number,
  acked: Set<string>,
  parallel = 4,
  before?: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await before?.(next);
      const event = { event: 'message', payload: messagePayload({ body: `#${next}` }) };
      const r = await api('POST', `/instances/${ins}/events`, event).catch(() => null);
      if (!r) return;
      if (r.status !== 202) throw new Error(`publish: ${r.status} ${JSON.stringify(r.body)}`);
      acked.add(r.body.event_id);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** The instance's whole delivery log (`query` adds filters). */
export async function deliveryLog(api: Api, ins: string, query = ''): Promise<any[]> {
  const all: any[] = [];
  let cursor = '';
  for (;;) {
    const r = await api('GET', `/instances/${ins}/deliveries?limit=200${query}${cursor}`);
    if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${JSON.stringify(r.body)}`);
    all.push(...r.body.deliveries);
    if (!r.body.next_cursor) return all;
    cursor = `&cursor=${r.body.next_cursor}`;
  }
}

/** Waits until the log holds `count` deliveries, none pending, and returns them. */
export const settledLog = (api: Api, ins: string, count: number, ms = 30_000) =>
  eventually(
    async () => {
      const all = await deliveryLog(api, ins);
      return all.length === count && all.every((d) => d.status !== 'pending') ? all : undefined;
    },
    ms,
    `${count} settled deliveries`,
  );

/** Waits until every id of `acked` was read from `d`. */
export async function readAll(d: Destination, acked: Set<string>, ms: number): Promise<void> {
  try {
    await eventually(async () => ((await missing(d, acked)).length === 0 ? true : undefined), ms);
  } catch {
    throw new Error(
      `${d.kind}: ${(await missing(d, acked)).length} of ${acked.size} acknowledged never read`,
    );
  }
}

/** Ids of `acked` not read (yet) from `d`. */
export async function missing(d: Destination, acked: Iterable<string>): Promise<string[]> {
  const seen = await d.read();
  return [...acked].filter((id) => !seen.has(id));
}

/** How many reads beyond the first, over all ids. */
export const duplicates = (seen: Map<string, number>): number =>
  [...seen.values()].reduce((sum, n) => sum + n - 1, 0);

/**
 * A TCP proxy on 127.0.0.1 in front of a broker whose answers can be held back: while `hold()` lasts, what the
 * broker sends (acks, confirms, entry ids) is kept here and what the client sends still goes through, so publishes
 * reach the broker and are stored but their proof does not come back. `release()` passes on what was kept.
 */
export class HoldingProxy {
  readonly port: number;
  readonly #server: Server;
  readonly #target: number;
  readonly #pairs = new Set<{ client: Socket; upstream: Socket; kept: Buffer[] }>();
  #holding = false;
  /** Bytes of the broker's answers held back since the last hold(). */
  held = 0;

  private constructor(server: Server, target: number) {
    this.#server = server;
    this.port = (server.address() as { port: number }).port;
    this.#target = target;
  }

  static async start(target: number): Promise<HoldingProxy> {
    let relay: (s: Socket) => void = (s) => s.destroy();
    const server = createServer((s) => relay(s));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const proxy = new HoldingProxy(server, target);
    relay = (s) => proxy.#relay(s);
    return proxy;
  }

  #relay(client: Socket): void {
    const upstream = createConnection({ host: '127.0.0.1', port: this.#target });
    const pair = { client, upstream, kept: [] as Buffer[] };
    this.#pairs.add(pair);
    const drop = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) s.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (!this.#holding) return void client.write(chunk);
      pair.kept.push(chunk);
      this.held += chunk.length;
    });
  }

  /** Open connections through the proxy. */
  get connections(): number {
    return this.#pairs.size;
  }

  hold(): void {
    this.#holding = true;
    this.held = 0;
  }

  release(): void {
    this.#holding = false;
    for (const pair of this.#pairs) for (const chunk of pair.kept.splice(0)) pair.client.write(chunk);
  }

  async close(): Promise<void> {
    for (const { client, upstream } of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
