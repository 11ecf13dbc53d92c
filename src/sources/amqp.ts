/**
 * A RabbitMQ source: a consumer (rabbitmq-client, on a channel of its own) on the queue with basic.qos prefetch =
 * SOURCE_PREFETCH, so the broker never has more unacknowledged messages out to this process. A message is answered
 * only once its event is stored: ack (those answered together in one basic.ack); a parked message is rejected
 * without requeue (dead-lettered when the queue has a dead-letter exchange, else dropped — it is kept in Herald's
 * parked list either way); a message left unanswered at a stop or a lost connection goes back to the queue. With
 * `exchange`, the durable queue is declared and bound.
 */
import { createHash } from 'node:crypto';
import { type AsyncMessage, type Channel, Connection } from 'rabbitmq-client';
import { type AmqpSource, sourceAddressKey } from '../domain/source-url.ts';
import {
  Answers,
  type ConsumerHooks,
  type ConsumerOptions,
  pause,
  type SourceConsumer,
  type Verdict,
} from './consumer.ts';
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
  const stopped = new Promise<void>((r) =>
    stopping.signal.addEventListener('abort', () => r(), { once: true }),
  );

  // One channel at a time: set up, consumed until it closes (a lost connection closes it; the client reconnects),
  // then set up again with backoff. What was taken on a closed channel goes back to the queue by itself.
  const loop = (async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      let ch: Channel | null = null;
      try {
        ch = await connection.acquire();
        const closed = new Promise<void>((resolve) => {
          ch?.once('close', resolve);
          ch?.once('basic.cancel', resolve); // the queue was deleted
        });
        if (t.exchange) {
          await ch.queueDeclare({ queue: t.queue, durable: true });
          await ch.queueBind({ queue: t.queue, exchange: t.exchange, routingKey: t.binding });
        } else await ch.queueDeclare({ queue: t.queue, passive: true });
        await ch.basicQos({ prefetchCount: options.prefetch });
        const answers = new ChannelAnswers(ch);
        const { consumerTag } = await ch.basicConsume({ queue: t.queue }, (msg) => {
          answers.taken(msg.deliveryTag);
          void take(msg).then((verdict) => answers.answer(msg.deliveryTag, verdict));
        });
        hooks.state('consuming', null);
        failures = 0;
        await Promise.race([closed, stopped]);
        if (stopping.signal.aborted) {
          await ch.basicCancel(consumerTag).catch(() => {});
          await Promise.race([answers.settled(), new Promise((r) => setTimeout(r, 5000).unref())]);
          await ch.close().catch(() => {});
        } else hooks.state('reconnecting', 'the channel closed; reconnecting');
      } catch (err) {
        if (stopping.signal.aborted) break;
        const code = (err as { code?: string }).code;
        const refused = code === 'NOT_FOUND' || code === 'ACCESS_REFUSED' || code === 'PRECONDITION_FAILED';
        hooks.state(refused ? 'failed' : 'reconnecting', words(err));
        if (ch?.active) await ch.close().catch(() => {});
        await pause(Math.min(10_000, 250 * 2 ** failures++), stopping.signal);
      }
    }
  })();

  async function take(msg: AsyncMessage): Promise<Verdict> {
    try {
      const parsed = !Buffer.isBuffer(msg.body) && typeof msg.body !== 'string';
      let bytes: Buffer | null = null;
      return await hooks.take({
        brokerId: brokerId(msg),
        // Made only when asked for (a size limit, a parked body): the client has parsed an application/json body.
        get body() {
          bytes ??= bodyOf(msg);
          return bytes;
        },
        ...(parsed ? { json: msg.body } : {}),
        traceparent: text(msg.headers?.traceparent),
      });
    } catch {
      return 'release';
    }
  }

  return {
    async stop() {
      stopping.abort();
      connection.off('error', onDown);
      await loop;
      await links.release(key);
    },
  };
}

/**
 * A channel's answers, sent in the order the messages were delivered: the messages answered `ack` at the front go
 * in one basic.ack with `multiple` (every delivery tag up to it), a parked one is rejected (no requeue: its
 * dead-letter exchange, if any, takes it), a released one goes back to the queue. An answered message behind one
 * not answered yet waits for it, so that `multiple` never covers a message not stored.
 */
class ChannelAnswers {
  readonly #ch: Channel;
  readonly #open: number[] = [];
  readonly #answers = new Map<number, Verdict>();
  readonly #flush = new Answers<[tag: number, verdict: Verdict]>((answered) => this.#send(answered));
  #idle: (() => void)[] = [];

  constructor(ch: Channel) {
    this.#ch = ch;
  }

  taken(tag: number): void {
    this.#open.push(tag);
  }

  answer(tag: number, verdict: Verdict): void {
    this.#flush.add([tag, verdict]);
  }

  /** Resolves once every message taken is answered and its answer sent. */
  settled(): Promise<void> {
    if (this.#open.length === 0) return Promise.resolve();
    return new Promise((r) => this.#idle.push(r));
  }

  #send(answered: [number, Verdict][]): void {
    for (const [tag, verdict] of answered) this.#answers.set(tag, verdict);
    let ackUpTo = 0;
    let n = 0;
    try {
      for (; n < this.#open.length; n++) {
        const tag = this.#open[n];
        const verdict = this.#answers.get(tag);
        if (verdict === undefined) break;
        this.#answers.delete(tag);
        if (verdict === 'ack') {
          ackUpTo = tag;
          continue;
        }
        if (ackUpTo) this.#ch.basicAck({ deliveryTag: ackUpTo, multiple: true });
        ackUpTo = 0;
        this.#ch.basicNack({ deliveryTag: tag, requeue: verdict === 'release' });
      }
      if (ackUpTo) this.#ch.basicAck({ deliveryTag: ackUpTo, multiple: true });
    } catch {
      // The channel closed: the broker puts back what it had not been told, for a new channel to take.
    }
    this.#open.splice(0, n);
    if (this.#open.length === 0) for (const r of this.#idle.splice(0)) r();
  }
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
