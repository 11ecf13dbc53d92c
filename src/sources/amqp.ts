/**
 * A RabbitMQ source: a consumer (rabbitmq-client) on the queue with basic.qos prefetch = SOURCE_PREFETCH, so the
 * broker never has more unacknowledged messages out to this process. The handler answers only once the event is
 * stored: ack; a parked message is rejected without requeue (dead-lettered when the queue has a dead-letter
 * exchange, else dropped — it is kept in Herald's parked list either way); a message left unanswered at a stop or
 * a lost connection goes back to the queue. With `exchange`, the durable queue is declared and bound.
 */
import { createHash } from 'node:crypto';
import { type AsyncMessage, Connection, type Consumer, ConsumerStatus } from 'rabbitmq-client';
import { type AmqpSource, sourceAddressKey } from '../domain/source-url.ts';
import type { ConsumerHooks, ConsumerOptions, SourceConsumer } from './consumer.ts';
import { SharedLinks } from './links.ts';

const links = new SharedLinks<Connection>(async (c) => {
  await Promise.race([c.close(), new Promise((r) => setTimeout(r, 2000).unref())]);
  c.unsafeDestroy();
});

function open(t: AmqpSource): Promise<Connection> {
  const connection = new Connection({
    hostname: t.host,
    port: t.port,
    username: t.username || 'guest',
    password: t.password || 'guest',
    vhost: t.vhost,
    tls: t.tls,
    retryLow: 250,
    retryHigh: 10_000,
    heartbeat: 30,
    connectionName: 'herald-sources',
  });
  connection.on('error', () => {}); // each consumer reports its own state
  return Promise.resolve(connection);
}

export async function consumeAmqp(
  t: AmqpSource,
  hooks: ConsumerHooks,
  options: ConsumerOptions,
): Promise<SourceConsumer> {
  const key = sourceAddressKey(t);
  const connection = await links.acquire(key, () => open(t));
  const stopping = new AbortController();
  const onDown = (err: unknown) => {
    if (!stopping.signal.aborted) hooks.state('reconnecting', words(err));
  };
  connection.on('error', onDown);
  const consumer: Consumer = connection.createConsumer(
    {
      queue: t.queue,
      qos: { prefetchCount: options.prefetch },
      concurrency: options.prefetch,
      requeue: true,
      ...(t.exchange
        ? {
            queueOptions: { queue: t.queue, durable: true },
            queueBindings: [{ queue: t.queue, exchange: t.exchange, routingKey: t.binding }],
          }
        : { queueOptions: { queue: t.queue, passive: true } }),
    },
    async (msg: AsyncMessage) => {
      const verdict = await hooks.take({
        brokerId: brokerId(msg),
        body: bodyOf(msg),
        traceparent: text(msg.headers?.traceparent),
      });
      if (verdict === 'ack') return ConsumerStatus.ACK;
      if (verdict === 'park') return ConsumerStatus.DROP;
      return ConsumerStatus.REQUEUE;
    },
  );
  consumer.on('ready', () => hooks.state('consuming', null));
  consumer.on('error', (err: unknown) => {
    if (stopping.signal.aborted) return;
    const code = (err as { code?: string }).code;
    const refused = code === 'NOT_FOUND' || code === 'ACCESS_REFUSED' || code === 'PRECONDITION_FAILED';
    hooks.state(refused ? 'failed' : 'reconnecting', words(err));
  });
  return {
    async stop() {
      stopping.abort();
      connection.off('error', onDown);
      await Promise.race([consumer.close(), new Promise((r) => setTimeout(r, 5000).unref())]);
      await links.release(key);
    },
  };
}

/** The message_id, or, when the publisher set none, a digest of the body (the same message read again has it too). */
function brokerId(msg: AsyncMessage): string {
  if (msg.messageId) return `amqp:${msg.messageId}`;
  return `amqp-body:${createHash('sha256').update(bodyOf(msg)).digest('hex')}`;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function bodyOf(msg: AsyncMessage): Buffer {
  const b = msg.body as unknown;
  if (Buffer.isBuffer(b)) return b;
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  return Buffer.from(JSON.stringify(b ?? null), 'utf8');
}

function words(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const text = (e?.message ?? String(err)).replace(/^[\w.]*:? ?[A-Z_]+ - /, '');
  switch (e?.code) {
    case 'ACCESS_REFUSED':
      return /login|auth/i.test(text) ? 'authentication failed' : `access refused: ${text}`;
    case 'NOT_FOUND':
      return `not found: ${text}`;
    case 'CONN_CLOSE':
      return 'the connection closed unexpectedly; reconnecting';
    case 'ECONNREFUSED':
      return 'connection refused; reconnecting';
  }
  return e?.code ? `${e.code}: ${text}` : text;
}
