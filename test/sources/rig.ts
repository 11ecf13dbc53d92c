/**
 * The broker side of the source tests, on the machine's shared brokers (RabbitMQ 5672 with its management API on
 * 15672, NATS JetStream 4222, Redis 6379): a queue, stream or consumer group of the test's own per kind (named per
 * run, removed afterwards), messages published into it, and what the broker says is unacknowledged. The brokers
 * themselves are never stopped; a connection cut goes through a TCP proxy of the test's.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';

const runCommand = promisify(execFile);

export type Kind = 'amqp' | 'nats' | 'redis';
export const KINDS: Kind[] = ['amqp', 'nats', 'redis'];
export const BROKER_PORTS: Record<Kind, number> = { amqp: 5672, nats: 4222, redis: 6379 };

export interface TestQueue {
  kind: Kind;
  /** The source url, straight to the broker or through `port` (a proxy's). */
  url(port?: number): string;
  /**
   * Publishes one message; `id` is the broker's id for it where the publisher sets one (AMQP message_id);
   * `traceparent` goes in a header (AMQP, NATS) or the entry's `traceparent` field (Redis).
   */
  publish(body: string, id?: string, traceparent?: string): Promise<void>;
  /**
   * Messages taken from the queue and not acknowledged, as the broker counts them; null where the broker cannot say
   * (RabbitMQ with neither its management API nor rabbitmqctl: then a test reads `waiting` once nothing consumes,
   * when every unacked message is back in the queue).
   */
  unacked(): Promise<number | null>;
  /** Messages not yet taken (ready), as the broker counts them. */
  waiting(): Promise<number>;
  remove(): Promise<void>;
}

export async function testQueue(kind: Kind): Promise<TestQueue> {
  const run = `herald-src-${randomBytes(4).toString('hex')}`;
  if (kind === 'amqp') return amqpQueue(run);
  if (kind === 'nats') return natsQueue(run.replace(/-/g, '_'));
  return redisQueue(run);
}

const MANAGEMENT = 'http://127.0.0.1:15672/api/queues/%2F/';
const auth = { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` };

/** The broker's own count from `rabbitmqctl` (the server's CLI, beside it on this machine); null without it. */
async function rabbitmqctlUnacked(queue: string): Promise<number | null> {
  try {
    const { stdout } = await runCommand(
      'rabbitmqctl',
      ['list_queues', '-q', '--no-table-headers', 'name', 'messages_unacknowledged'],
      {
        timeout: 30_000,
      },
    );
    const row = stdout
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .find(([name]) => name === queue);
    return row ? Number(row[1]) : null;
  } catch {
    return null;
  }
}

async function amqpQueue(queue: string): Promise<TestQueue> {
  const rabbit = new Connection('amqp://guest:guest@127.0.0.1:5672');
  rabbit.on('error', () => {});
  await rabbit.queueDeclare({ queue, durable: true });
  const publisher = rabbit.createPublisher({ confirm: true });
  const unacked = async () => {
    try {
      const res = await fetch(`${MANAGEMENT}${encodeURIComponent(queue)}`, { headers: auth });
      const stats = (await res.json()) as { messages_unacknowledged?: number };
      return stats.messages_unacknowledged ?? null;
    } catch {
      return rabbitmqctlUnacked(queue); // no management API on this machine
    }
  };
  return {
    kind: 'amqp',
    url: (port = 5672) => `amqp://guest:guest@127.0.0.1:${port}/%2F?queue=${queue}`,
    async publish(body, id, traceparent) {
      await publisher.send(
        {
          routingKey: queue,
          durable: true,
          messageId: id,
          contentType: 'application/json',
          ...(traceparent ? { headers: { traceparent } } : {}),
        },
        Buffer.from(body),
      );
    },
    unacked,
    waiting: async () => (await rabbit.queueDeclare({ queue, passive: true })).messageCount,
    async remove() {
      await publisher.close();
      await rabbit.queueDelete({ queue }).catch(() => {});
      await rabbit.close();
    },
  };
}

async function natsQueue(stream: string): Promise<TestQueue> {
  const nc: NatsConnection = await connect({ servers: '127.0.0.1:4222' });
  const jsm: JetStreamManager = await jetstreamManager(nc);
  const subject = `${stream}.events`;
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
  const js = jetstream(nc);
  const info = () => jsm.consumers.info(stream, 'herald').catch(() => null);
  return {
    kind: 'nats',
    url: (port = 4222) => `nats://127.0.0.1:${port}/${stream}?consumer=herald&subject=${subject}`,
    async publish(body, _id, traceparent) {
      const h = traceparent ? headers() : undefined;
      h?.set('traceparent', traceparent as string);
      await js.publish(subject, body, h ? { headers: h } : undefined);
    },
    unacked: async () => (await info())?.num_ack_pending ?? 0,
    async waiting() {
      const i = await info();
      return i ? i.num_pending : (await jsm.streams.info(stream)).state.messages;
    },
    async remove() {
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
    },
  };
}

/** Creates the consumer itself, so that messages published before Herald starts are the consumer's too. */
export async function natsConsumerFirst(q: TestQueue, ackWaitMs?: number): Promise<void> {
  const url = new URL(q.url());
  const nc = await connect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(url.pathname.slice(1), {
    durable_name: 'herald',
    ack_policy: AckPolicy.Explicit,
    filter_subject: url.searchParams.get('subject') ?? undefined,
    // The time JetStream waits for a dead consumer's acks before it delivers those messages again (default 30 s).
    ...(ackWaitMs === undefined ? {} : { ack_wait: ackWaitMs * 1_000_000 }),
  });
  await nc.close();
}

async function redisQueue(stream: string): Promise<TestQueue> {
  const redis = createClient({ socket: { host: '127.0.0.1', port: 6379 }, RESP: 2 });
  await redis.connect();
  // The group exists from the start (at 0), so that messages published before Herald starts are read too.
  await redis.xGroupCreate(stream, 'herald', '0', { MKSTREAM: true });
  return {
    kind: 'redis',
    url: (port = 6379) => `redis://127.0.0.1:${port}/0?stream=${stream}&group=herald`,
    async publish(body, _id, traceparent) {
      await redis.xAdd(stream, '*', traceparent ? { body, traceparent } : { body });
    },
    unacked: async () => Number((await redis.xPending(stream, 'herald')).pending),
    async waiting() {
      const groups = (await redis.xInfoGroups(stream)) as unknown as { lag?: number }[];
      return Number(groups[0]?.lag ?? 0);
    },
    async remove() {
      await redis.del(stream);
      await redis.close();
    },
  };
}
