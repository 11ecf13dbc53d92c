/**
 * NATS JetStream through @nats-io/transport-node and @nats-io/jetstream. A publish is delivered when the stream
 * acknowledges it (PubAck); a subject no stream covers is refused at once by the server ("no responders"), and no
 * ack within the attempt's time is a failed attempt. Nats-Msg-Id is the event id, so an attempt retried after an
 * ack was lost (a cut just after the server stored it) is stored once: the stream answers "duplicate".
 *
 * The client is given the addresses the destination guard approved (pinning.ts), never the name, and its own
 * reconnect loop dials through the guard again at every pass (dialThroughGuard); tls:// verifies the server's
 * certificate against the URL's host name.
 */
import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection, type TlsOptions } from '@nats-io/transport-node';
import { brokerAddressKey, type NatsTarget } from '../../domain/broker-url.ts';
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
} from './publisher.ts';

interface Link {
  nc: NatsConnection;
  pin: Pin;
  js: JetStreamClient;
  /** Set while the client is reconnecting: attempts fail at once instead of queueing in its buffer. */
  down: string | null;
  attempts: number;
  /** The attempts awaiting their PubAck: a disconnect fails them at once (the ack would go to a dead inbox). */
  inflight: Set<(err: Error) => void>;
}

/** An attempt whose connection was lost before its PubAck arrived. */
class Cut extends Error {
  constructor() {
    super('connection lost before the stream acknowledged');
  }
}

export class NatsPublisher implements BrokerPublisher<NatsTarget> {
  readonly connections: ConnectionPool<NatsTarget, Link>;
  readonly #connectTimeoutMs: number;
  readonly #destinations: DestinationPolicy;

  constructor(options: PublisherOptions) {
    this.#connectTimeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
    this.#destinations = options.destinations;
    this.connections = new ConnectionPool(
      { open: (t, lost) => this.#open(t, lost), close: (link) => link.nc.close().catch(() => {}) },
      options.pool,
    );
  }

  async publish(target: NatsTarget, message: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer> {
    const deadline = performance.now() + timeoutMs;
    return answerWithin(
      target,
      timeoutMs,
      `timeout: no ack within ${timeoutMs} ms`,
      () =>
        this.connections.use(brokerAddressKey(target), target, (link) =>
          send(link, target, message, deadline),
        ),
      (err) => words(err, target, timeoutMs),
    );
  }

  close(): Promise<void> {
    return this.connections.closeAll();
  }

  async #open(t: NatsTarget, lost: (err: unknown) => void): Promise<Link> {
    const backoff = this.connections.backoff;
    const auth = t.password
      ? { user: t.username, pass: t.password }
      : t.username
        ? { token: t.username }
        : {};
    let link: Link | null = null;
    const pin = new Pin(t.host, this.#destinations);
    const addresses = await pin.addresses();
    const nc = await connect({
      servers: addresses.map((a) => hostPort(a, t.port)),
      noRandomize: true, // in the resolver's order, as a socket would try them
      ...auth,
      // The node transport passes these options on to tls.connect: the server's name, not the address dialled.
      ...(t.tls ? { tls: (pin.serverName ? { servername: pin.serverName } : {}) as TlsOptions } : {}),
      name: 'herald',
      timeout: this.#connectTimeoutMs,
      maxReconnectAttempts: -1, // the pool's idle timeout ends a connection nobody uses any more
      // The client asks at every pass of its reconnect loop, waiting ones too: attempts are counted per dial below.
      reconnectDelayHandler: () => backoffDelay(backoff, link ? link.attempts : 0),
      // Servers a cluster gossips about were never checked as destinations: only the one in the URL is used.
      ignoreClusterUpdates: true,
      pingInterval: 20_000,
      maxPingOut: 2,
      // The client otherwise builds two errors with stack traces for every publish, in case it times out: a quarter
      // of the delivery thread's time in a NATS burst (BENCHMARKS.md). Herald's failure words never use them.
      noAsyncTraces: true,
    });
    link = { nc, pin, js: jetstream(nc), down: null, attempts: 0, inflight: new Set() };
    const current = link;
    try {
      dialThroughGuard(nc, pin, t.port, () => current.attempts++);
    } catch (err) {
      await nc.close().catch(() => {});
      throw err;
    }
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect' || s.type === 'staleConnection') {
          current.down ??= 'the connection was lost';
          for (const drop of current.inflight) drop(new Cut());
        } else if (s.type === 'reconnecting') {
          current.attempts++;
        } else if (s.type === 'reconnect') {
          current.down = null;
          current.attempts = 0;
        }
      }
    })().catch(() => {});
    // Closed by the client itself (e.g. the password was refused twice on reconnect), or by us: the pool tells.
    void nc.closed().then((err) => lost(err ?? new Error('connection closed')));
    return link;
  }
}

/**
 * Makes the client's reconnect loop dial through the guard: each pass resolves the broker's name again and dials
 * the addresses approved now, the name kept as the TLS name; a pass the guard refuses is a failed dial (`refused`
 * counts it), and the loop tries again after its backoff. The client has no public hook for this, so its dial step
 * (the protocol handler's `_doDial`, which resolves a server and dials what that gives) is wrapped; a client
 * without one is refused rather than left to dial by itself.
 */
function dialThroughGuard(nc: NatsConnection, pin: Pin, port: number, refused: () => void): void {
  type Dialled = { hostname: string; port: number; tlsName: string };
  type Protocol = { _doDial?: (server: { resolve(): Promise<Dialled[]> }) => Promise<void> };
  const protocol = (nc as unknown as { protocol?: Protocol }).protocol;
  const dial = protocol?._doDial?.bind(protocol);
  if (!protocol || !dial) {
    throw new Error('this NATS client has no dial step to check: its reconnects could not be pinned');
  }
  protocol._doDial = async () => {
    let addresses: string[];
    try {
      addresses = await pin.addresses();
    } catch (err) {
      refused();
      throw err;
    }
    const servers = addresses.map((hostname) => ({ hostname, port, tlsName: pin.serverName ?? '' }));
    return dial({ resolve: async () => servers });
  };
}

const hostPort = (address: string, port: number) =>
  `${address.includes(':') ? `[${address}]` : address}:${port}`;

async function send(link: Link, t: NatsTarget, m: BrokerMessage, deadline: number): Promise<BrokerAnswer> {
  if (link.down) throw link.pin.refusal ?? new ConnectionDown(link.down);
  const h = headers();
  for (const [name, value] of Object.entries(m.headers)) h.set(name, value);
  let drop: (err: Error) => void = () => {};
  const cut = new Promise<never>((_, reject) => {
    drop = reject;
  });
  link.inflight.add(drop);
  try {
    const published = link.js.publish(t.subject, m.body, {
      msgID: m.event_id,
      headers: h,
      timeout: Math.max(1, Math.round(deadline - performance.now())),
    });
    published.catch(() => {}); // when the cut wins, its own timeout comes later and is nobody's concern
    const ack = await Promise.race([published, cut]);
    return delivered(`broker_ack stream=${ack.stream} seq=${ack.seq}${ack.duplicate ? ' duplicate' : ''}`);
  } finally {
    link.inflight.delete(drop);
  }
}

function words(err: unknown, t: NatsTarget, timeoutMs: number): string {
  if (refusedByGuard(err)) return REFUSED;
  if (err instanceof ConnectionDown || err instanceof PoolClosed || err instanceof Cut) return err.message;
  if (err instanceof BackingOff)
    return `${words(err.cause, t, timeoutMs)} (next connection attempt in ${Math.ceil(err.retryInMs)} ms)`;
  const socket = socketWords(err, t) ?? socketWords((err as Error)?.cause, t);
  if (socket) return socket;
  const e = err as Error & { code?: number; apiError?: () => { description?: string } };
  const text = messageOf(err);
  switch (e?.name) {
    case 'JetStreamNotEnabled': // what the client makes of "no responders" on a JetStream publish
    case 'NoResponders':
      return `no stream for subject "${t.subject}"`;
    case 'JetStreamApiError':
    case 'StreamNotFoundError': {
      const description = e.apiError?.().description ?? text;
      return /maximum (messages|bytes)/i.test(description)
        ? `stream full: ${description}`
        : `the stream refused the message: ${description}`;
    }
    case 'TimeoutError':
      return `timeout: no ack within ${timeoutMs} ms`;
    case 'AuthorizationError':
    case 'UserAuthenticationExpiredError':
      return t.username ? `authentication failed for user "${t.username}"` : 'authentication failed';
    case 'PermissionViolationError':
      return `permission denied: this user may not publish to "${t.subject}"`;
    case 'ClosedConnectionError':
      return 'connection closed';
    case 'ConnectionError':
      return /refused/i.test(text)
        ? `connection refused by ${t.host}:${t.port}`
        : `connection error: ${text}`;
    case 'InvalidArgumentError':
      return `invalid message: ${text}`;
  }
  return text;
}
