/**
 * RabbitMQ (AMQP 0-9-1) through rabbitmq-client. Each publish is persistent and `mandatory` on a confirm channel:
 * delivered when the broker acks it. A nack, a basic.return (no queue took it), a closed channel or connection, or
 * no confirm in time is a failed attempt.
 *
 * rabbitmq-client resolves a send on the broker's ack and reports a basic.return only as a `basic.return` event,
 * emitted on a later turn of the event loop (setImmediate) than the ack it precedes on the wire. So a send is
 * judged one turn after its ack, by whether a return came for its message id meanwhile.
 *
 * One channel (a Publisher) per exchange: publishing to an exchange that does not exist makes the broker close
 * the channel, which must not fail the attempts of other webhooks publishing to other exchanges meanwhile.
 *
 * The client dials through the destination guard (its socket's lookup, pinning.ts) at every connection, its own
 * reconnects included; amqps verifies the broker's certificate against the URL's host name.
 */
import { type AMQPError, Connection, type Publisher, type ReturnedMessage } from 'rabbitmq-client';
import { type AmqpTarget, brokerAddressKey } from '../../domain/broker-url.ts';
import type { DestinationPolicy } from '../destination.ts';
import { BackingOff, ConnectionPool, PoolClosed } from './connections.ts';
import { Pin } from './pinning.ts';
import {
  answerWithin,
  type BrokerAnswer,
  type BrokerMessage,
  type BrokerPublisher,
  CONNECT_TIMEOUT_MS,
  ConnectionDown,
  delivered,
  failed,
  messageOf,
  nextTurn,
  type PublisherOptions,
  REFUSED,
  refusedByGuard,
  socketWords,
  withDeadline,
} from './publisher.ts';

interface Link {
  connection: Connection;
  pin: Pin;
  publishers: Map<string, Publisher>;
  /** Why the broker last closed an exchange's channel (e.g. no such exchange), until a publish there succeeds. */
  refused: Map<string, unknown>;
  /** Publishes awaiting their confirm, and the returns received for them, by returnKey. */
  pending: Map<string, number>;
  returned: Map<string, ReturnedMessage>;
  /** Why the connection is down while its client reconnects; null when up. */
  down: unknown;
  closed: boolean;
}

export class AmqpPublisher implements BrokerPublisher<AmqpTarget> {
  readonly connections: ConnectionPool<AmqpTarget, Link>;
  readonly #connectTimeoutMs: number;
  readonly #destinations: DestinationPolicy;

  constructor(options: PublisherOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.#destinations = options.destinations;
    this.connections = new ConnectionPool(
      { open: (t) => this.#open(t), close: (link) => closeLink(link) },
      options.pool,
    );
  }

  async publish(target: AmqpTarget, message: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer> {
    return answerWithin(
      target,
      timeoutMs,
      `timeout: no confirm within ${timeoutMs} ms`,
      () => this.connections.use(brokerAddressKey(target), target, (link) => send(link, target, message)),
      (err) => words(err, target),
    );
  }

  close(): Promise<void> {
    return this.connections.closeAll();
  }

  /** Settles when the first handshake succeeds, or with its error: the client would otherwise retry forever. */
  async #open(t: AmqpTarget): Promise<Link> {
    const backoff = this.connections.backoff;
    const pin = new Pin(t.host, this.#destinations);
    await pin.checkLiteral();
    const connection = new Connection({
      hostname: t.host,
      port: t.port,
      username: t.username,
      password: t.password,
      vhost: t.vhost,
      socket: { port: t.port, lookup: pin.lookup }, // the port again only because the type wants one
      tls: t.tls && (pin.serverName ? { servername: pin.serverName } : true),
      connectionTimeout: this.#connectTimeoutMs,
      acquireTimeout: this.#connectTimeoutMs,
      retryLow: backoff.firstMs,
      retryHigh: backoff.maxMs,
      heartbeat: 30, // a silently dead peer is found within a minute, failing the sends it held
      connectionName: 'herald',
    });
    const link: Link = {
      connection,
      pin,
      publishers: new Map(),
      refused: new Map(),
      pending: new Map(),
      returned: new Map(),
      down: null,
      closed: false,
    };
    // Always listened to (an unheard 'error' would crash the process). Only the first errors of a reconnect series
    // are emitted, and channel errors come here too: only those while the connection is not ready say it is down.
    connection.on('error', (err) => {
      if (!connection.ready) link.down = err;
    });
    connection.on('connection', () => {
      link.down = null;
    });
    return new Promise((resolve, reject) => {
      const first = (err: unknown) => {
        connection.off('connection', up);
        connection.unsafeDestroy(); // stops its retry timer too
        reject(err);
      };
      const up = () => {
        connection.off('error', first);
        resolve(link);
      };
      connection.once('error', first);
      connection.once('connection', up);
    });
  }
}

async function send(link: Link, t: AmqpTarget, m: BrokerMessage): Promise<BrokerAnswer> {
  // The client reports only the first failures of a reconnect series: the guard's own verdict says why it is down.
  if (!link.connection.ready && link.pin.refusal) throw link.pin.refusal;
  if (link.down && !link.connection.ready) {
    const closed = (link.down as AMQPError).code === 'CONN_CLOSE';
    throw new ConnectionDown(closed ? 'the socket closed unexpectedly' : words(link.down, t));
  }
  let publisher = link.publishers.get(t.exchange);
  if (!publisher) {
    publisher = link.connection.createPublisher({ confirm: true, maxAttempts: 1 });
    publisher.on('basic.return', (r: ReturnedMessage) => {
      const key = returnKey(r.exchange, r.routingKey, r.messageId);
      if (link.pending.has(key)) link.returned.set(key, r);
    });
    link.publishers.set(t.exchange, publisher);
  }
  const id = returnKey(t.exchange, t.routingKey, m.event_id);
  link.pending.set(id, (link.pending.get(id) ?? 0) + 1);
  try {
    await publisher.send(
      {
        exchange: t.exchange,
        routingKey: t.routingKey,
        mandatory: true,
        durable: true,
        messageId: m.event_id,
        contentType: 'application/json',
        headers: m.headers,
        timestamp: Number(m.timestamp) || undefined,
      },
      Buffer.from(m.body, 'utf8'), // a Buffer: a string body would be relabelled text/plain
    );
    await nextTurn(); // the basic.return, if any, is emitted by now
    link.refused.delete(t.exchange);
    const returned = link.returned.get(id);
    if (returned) return failed(unroutable(returned));
    return delivered('broker_ack');
  } catch (err) {
    // The broker's close of a channel fails the first unconfirmed publish with its reason, and the others on
    // that channel only with "channel closed": they are told the reason too.
    const code = (err as AMQPError).code;
    if (CHANNEL_REFUSALS.has(code)) link.refused.set(t.exchange, err);
    else if (code === 'CH_CLOSE' && link.refused.has(t.exchange)) throw link.refused.get(t.exchange);
    throw err;
  } finally {
    const left = (link.pending.get(id) ?? 1) - 1;
    if (left > 0) link.pending.set(id, left);
    else {
      link.pending.delete(id);
      link.returned.delete(id);
    }
  }
}

/**
 * A return names its exchange, routing key and message id: the same event published at once to another
 * exchange (another webhook on the same broker) must not take this one's return for its own.
 */
const returnKey = (exchange: string, routingKey: string, messageId: string | undefined) =>
  `${exchange}\0${routingKey}\0${messageId ?? ''}`;

const CHANNEL_REFUSALS = new Set(['NOT_FOUND', 'ACCESS_REFUSED', 'PRECONDITION_FAILED', 'RESOURCE_LOCKED']);

function unroutable(r: ReturnedMessage): string {
  const exchange = r.exchange ? `exchange "${r.exchange}"` : 'the default exchange';
  if (r.replyCode === 312)
    return `unroutable: no queue bound to ${exchange} with routing key "${r.routingKey}"`;
  return `returned by the broker: ${r.replyText} (${exchange}, routing key "${r.routingKey}")`;
}

async function closeLink(link: Link): Promise<void> {
  if (link.closed) return;
  link.closed = true;
  await Promise.all([...link.publishers.values()].map((p) => p.close().catch(() => {})));
  // close() waits for the server's close-ok; a broker that is away would make it wait for ever.
  await withDeadline(
    2_000,
    link.connection.close().catch(() => {}),
    () => link.connection.unsafeDestroy(),
  );
}

/** The reply text a broker's close carries, without rabbitmq-client's "Method: CODE - " prefix. */
const replyText = (message: string) => message.replace(/^[\w.]*:? ?[A-Z_]+ - /, '');

function words(err: unknown, t: AmqpTarget): string {
  if (refusedByGuard(err)) return REFUSED;
  if (err instanceof ConnectionDown) return err.message;
  if (err instanceof PoolClosed) return err.message;
  if (err instanceof BackingOff)
    return `${words(err.cause, t)} (next connection attempt in ${Math.ceil(err.retryInMs)} ms)`;
  const socket = socketWords(err, t);
  if (socket) return socket;
  const e = err as AMQPError;
  const text = replyText(messageOf(err));
  switch (e?.code) {
    case 'ACCESS_REFUSED':
      return /login|auth/i.test(text)
        ? `authentication failed for user "${t.username}"`
        : `access refused: ${text}`;
    case 'NOT_ALLOWED':
      return `vhost "${t.vhost}" not found or not allowed for user "${t.username}"`;
    case 'NOT_FOUND': {
      const ex = /no exchange '(.*)' in vhost '(.*)'/.exec(text);
      return ex ? `no exchange "${ex[1]}" in vhost "${ex[2]}"` : `not found: ${text}`;
    }
    case 'NACK':
      return 'nack: the broker refused the message (e.g. a full queue that rejects new messages)';
    case 'CONN_CLOSE':
    case 'SOCKET_TIMEOUT':
      return 'connection lost before the broker confirmed';
    case 'CH_CLOSE':
    case 'CLOSING':
      return 'channel closed before the broker confirmed';
    case 'CONNECTION_TIMEOUT':
      return `connection to ${t.host}:${t.port} timed out`;
    case 'TIMEOUT':
      return 'timeout: no connection to the broker';
    case 'CONNECTION_FORCED':
      return `the broker closed the connection: ${text}`;
  }
  return e?.code ? `${e.code}: ${text}` : text;
}
