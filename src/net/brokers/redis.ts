/**
 * Redis Streams through node-redis (@redis/client). An attempt is `XADD <stream> [MAXLEN ~ N] * event_id … body …`,
 * delivered when Redis answers with the entry id. The offline queue is off: a command given while the client
 * reconnects fails at once rather than running later, after its attempt was already counted failed (which would
 * store the event twice once the caller retries).
 *
 * The client dials through the destination guard (its socket's lookup, pinning.ts) at every connection, its own
 * reconnects included; rediss verifies the server's certificate against the URL's host name.
 */
import { createClient, type RedisClientType } from '@redis/client';
import { brokerAddressKey, type RedisTarget } from '../../domain/broker-url.ts';
import type { DestinationPolicy } from '../destination.ts';
import { BackingOff, backoffDelay, ConnectionPool, PoolClosed } from './connections.ts';
import { Pin } from './pinning.ts';
import {
  answerWithin,
  type BrokerAnswer,
  type BrokerMessage,
  type BrokerPublisher,
  CONNECT_TIMEOUT_MS,
  ConnectionDown,
  delivered,
  messageOf,
  type PublisherOptions,
  REFUSED,
  refusedByGuard,
  socketWords,
  withDeadline,
} from './publisher.ts';

// RESP2: stream replies as plain objects, and servers older than 6 (no HELLO) work too.
type Client = RedisClientType<Record<string, never>, Record<string, never>, Record<string, never>, 2>;

interface Link {
  client: Client;
  pin: Pin;
  /** The last error while the client reconnects; null when it is ready. */
  down: unknown;
}

/** Refusals a retry cannot cure: the client stops instead of reconnecting for ever. */
const FATAL = /^(WRONGPASS|NOAUTH|NOPERM|ERR (invalid password|AUTH|DB index))/;

class ConnectTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

export class RedisPublisher implements BrokerPublisher<RedisTarget> {
  readonly connections: ConnectionPool<RedisTarget, Link>;
  readonly #connectTimeoutMs: number;
  readonly #destinations: DestinationPolicy;

  constructor(options: PublisherOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.#destinations = options.destinations;
    this.connections = new ConnectionPool(
      { open: (t, lost) => this.#open(t, lost), close: (link) => closeLink(link) },
      options.pool,
    );
  }

  async publish(target: RedisTarget, message: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer> {
    return answerWithin(
      target,
      timeoutMs,
      `timeout: no answer from Redis within ${timeoutMs} ms`,
      () => this.connections.use(brokerAddressKey(target), target, (link) => send(link, target, message)),
      (err) => words(err, target),
    );
  }

  close(): Promise<void> {
    return this.connections.closeAll();
  }

  async #open(t: RedisTarget, lost: (err: unknown) => void): Promise<Link> {
    const backoff = this.connections.backoff;
    let ready = false;
    const pin = new Pin(t.host, this.#destinations);
    await pin.checkLiteral();
    const client: Client = createClient({
      socket: {
        host: t.host,
        port: t.port,
        lookup: pin.lookup,
        ...(t.tls ? { tls: true as const, ...(pin.serverName ? { servername: pin.serverName } : {}) } : {}),
        connectTimeout: this.#connectTimeoutMs,
        // The first connection fails at once (the pool backs off); later, only what a retry may cure is retried.
        reconnectStrategy: (retries, cause) =>
          !ready || FATAL.test(messageOf(cause)) ? false : backoffDelay(backoff, retries),
      },
      ...(t.username ? { username: t.username } : {}),
      ...(t.password ? { password: t.password } : {}),
      database: t.db,
      name: 'herald',
      RESP: 2,
      disableOfflineQueue: true,
    });
    const link: Link = { client, pin, down: null };
    client.on('error', (err) => {
      link.down = err;
    });
    client.on('ready', () => {
      link.down = null;
    });
    // The strategy gave up (e.g. the password changed): the pool opens a new one at the next attempt.
    client.on('terminated', (cause) => lost(cause));
    // connectTimeout covers the socket only: a server that accepts and never answers AUTH would hang the open.
    const connected = client.connect().then(
      () => true,
      (err) => err,
    );
    const result = await withDeadline(
      this.#connectTimeoutMs,
      connected,
      () => new ConnectTimeout(this.#connectTimeoutMs),
    );
    if (result !== true) {
      client.destroy();
      throw result;
    }
    ready = true;
    return link;
  }
}

async function send(link: Link, t: RedisTarget, m: BrokerMessage): Promise<BrokerAnswer> {
  if (!link.client.isReady) {
    throw link.pin.refusal ?? new ConnectionDown(link.down ? words(link.down, t) : 'reconnecting');
  }
  const fields: Record<string, string> = { event_id: m.event_id, event: m.event, timestamp: m.timestamp };
  if (m.signature !== null) fields.signature = m.signature;
  if (m.traceparent) fields.traceparent = m.traceparent;
  fields.body = m.body;
  const trim =
    t.maxlen === null
      ? undefined
      : { strategy: 'MAXLEN' as const, strategyModifier: '~' as const, threshold: t.maxlen };
  const id = await link.client.xAdd(t.stream, '*', fields, trim ? { TRIM: trim } : undefined);
  return delivered(`broker_ack ${id}`);
}

async function closeLink(link: Link): Promise<void> {
  if (!link.client.isOpen) return link.client.destroy();
  // close() lets queued replies arrive; a server that is away would make it wait, so destroy after a while.
  await withDeadline(
    2_000,
    link.client.close().catch(() => {}),
    () => link.client.destroy(),
  );
}

function words(err: unknown, t: RedisTarget): string {
  if (refusedByGuard(err)) return REFUSED;
  if (err instanceof ConnectionDown || err instanceof PoolClosed) return err.message;
  if (err instanceof BackingOff)
    return `${words(err.cause, t)} (next connection attempt in ${Math.ceil(err.retryInMs)} ms)`;
  if (err instanceof ConnectTimeout) return `connection to ${t.host}:${t.port} timed out (${err.message})`;
  const socket = socketWords(err, t);
  if (socket) return socket;
  const text = messageOf(err);
  const name = (err as Error)?.name ?? '';
  if (/^WRONGPASS/.test(text) || /invalid password/i.test(text))
    return t.username ? `authentication failed for user "${t.username}"` : 'authentication failed';
  if (/^NOAUTH/.test(text)) return 'authentication failed: the server needs a password';
  if (/^NOPERM/.test(text)) return `permission denied: ${text.replace(/^NOPERM\s*/, '')}`;
  if (/^WRONGTYPE/.test(text)) return `the key "${t.stream}" holds something other than a stream`;
  if (/^OOM/.test(text)) return 'Redis is out of memory (maxmemory reached): the entry was not added';
  if (/^READONLY/.test(text)) return 'the server is a read-only replica';
  if (/DB index is out of range/.test(text)) return `no database ${t.db} on the server`;
  if (/^LOADING/.test(text)) return 'Redis is loading its data set';
  switch (name) {
    case 'ConnectionTimeoutError':
      return `connection to ${t.host}:${t.port} timed out`;
    case 'SocketClosedUnexpectedlyError':
      return 'connection lost before Redis answered';
    case 'ClientOfflineError':
      return 'connection down; reconnecting';
    case 'ClientClosedError':
      return 'connection closed';
  }
  return text;
}
