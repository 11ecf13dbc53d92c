/**
 * A source's url: the queue Herald consumes events from. Parsed and checked here, with no I/O, so that the API
 * refuses a wrong one naming the part that is wrong.
 *
 *   amqp[s]://user:pass@host:port/vhost?queue=Q[&exchange=E&binding=K]   (5672, amqps 5671; vhost "/" when none)
 *   nats://user:pass@host:port/stream?consumer=C[&subject=S], tls://…     (4222; a durable pull consumer)
 *   redis[s]://[user]:pass@host:port/db?stream=S&group=G                  (6379; db 0 when none)
 */
import {
  brokerAddressKey,
  brokerScheme,
  type Endpoint,
  maskPassword,
  restorePassword,
  schemeOf,
} from './broker-url.ts';

export interface AmqpSource extends Endpoint {
  kind: 'amqp';
  vhost: string;
  queue: string;
  /** With an exchange, Herald declares the durable queue and binds it with `binding`; null: the queue exists. */
  exchange: string | null;
  binding: string;
}
export interface NatsSource extends Endpoint {
  kind: 'nats';
  stream: string;
  consumer: string;
  /** The filter subject of a consumer Herald creates when it does not exist; null: it must exist. */
  subject: string | null;
}
export interface RedisSource extends Endpoint {
  kind: 'redis';
  db: number;
  stream: string;
  group: string;
}
export type SourceTarget = AmqpSource | NatsSource | RedisSource;

const PORTS = { amqp: 5672, amqps: 5671, nats: 4222, tls: 4222, redis: 6379, rediss: 6379 } as const;
const PARAMS = {
  amqp: ['queue', 'exchange', 'binding'],
  nats: ['consumer', 'subject'],
  redis: ['stream', 'group'],
} as const;
const PATH_PART = { amqp: 'vhost', nats: 'stream', redis: 'database number' } as const;
const SHORTSTR = 255;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const CONTROL = /[\x00-\x20\x7f]/;
const NAME = /^[A-Za-z0-9_-]{1,200}$/; // JetStream stream and consumer names

export class SourceUrlProblem {
  readonly message: string;
  constructor(message: string) {
    this.message = `url: ${message}`;
  }
}

const decode = (s: string): string | null => {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
};
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export function parseSourceUrl(raw: unknown): SourceTarget | SourceUrlProblem {
  const fail = (m: string) => new SourceUrlProblem(m);
  if (typeof raw !== 'string' || raw === '') return fail('is required, such as amqp://host/?queue=events');
  if (raw.length > 2048) return fail('at most 2048 characters');
  const scheme = schemeOf(raw);
  const kind = brokerScheme(scheme);
  if (!scheme || !kind)
    return fail(
      `unknown scheme ${scheme ? `"${scheme}:"` : 'missing'}; use amqp, amqps, nats, tls, redis or rediss`,
    );
  if (CONTROL.test(raw)) return fail('must not contain spaces or control characters (write %20)');
  const parts = /^[^:]+:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s.exec(raw);
  if (!parts) return fail(`must start with ${scheme}:// and then the host`);
  if (parts[4] !== undefined) return fail('must not have a #fragment');
  const hostPort = parts[1].slice(parts[1].lastIndexOf('@') + 1);
  const port = /^(?:\[[^\]]*\]|[^:[\]]*):(.*)$/.exec(hostPort)?.[1];
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && +port >= 1 && +port <= 65535))
    return fail(`the port must be a whole number from 1 to 65535, got "${port}"`);
  if (!URL.canParse(raw)) return fail('is not a valid URL (check the host name and any % escapes)');
  const url = new URL(raw);
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (!host) return fail(`needs a host name, as in ${scheme}://broker.example.com`);
  const username = decode(url.username);
  const password = decode(url.password);
  if (username === null || password === null)
    return fail('the user name or password has a malformed % escape');
  const s = scheme as Endpoint['scheme'];
  const e: Endpoint = {
    scheme: s,
    tls: s === 'amqps' || s === 'tls' || s === 'rediss',
    host,
    port: port ? Number(port) : PORTS[s],
    username,
    password,
  };
  const params = new Map<string, string>();
  const allowed: readonly string[] = PARAMS[kind];
  for (const [name, value] of url.searchParams) {
    if (!allowed.includes(name))
      return fail(`unknown parameter "${name}" for a ${kind} source; use ${allowed.join(', ')}`);
    if (params.has(name)) return fail(`the parameter ${name} is given twice`);
    params.set(name, value);
  }
  const segments = parts[2].split('/').slice(1);
  if (segments.length > 1)
    return fail(`the path must be one segment, the ${PATH_PART[kind]} (write / inside it as %2F)`);
  const segment = decode(segments[0] ?? '');
  if (segment === null) return fail('the path has a malformed % escape');
  if (kind === 'amqp') return amqpSource(e, segment, params);
  if (kind === 'nats') return natsSource(e, segment, params);
  return redisSource(e, segment, params);
}

function amqpSource(e: Endpoint, vhost: string, p: Map<string, string>): AmqpSource | SourceUrlProblem {
  const queue = p.get('queue') ?? '';
  const exchange = p.get('exchange');
  const binding = p.get('binding') ?? '';
  if (!queue) return new SourceUrlProblem('an amqp source needs ?queue=<name>, the queue Herald consumes');
  for (const [part, value] of [
    ['vhost', vhost],
    ['queue', queue],
    ['exchange', exchange ?? ''],
    ['binding', binding],
  ]) {
    if (bytes(value) > SHORTSTR) return new SourceUrlProblem(`the ${part} is at most 255 bytes`);
    if (CONTROL.test(value) && part !== 'binding')
      return new SourceUrlProblem(`the ${part} must not contain spaces or control characters`);
  }
  if (p.has('binding') && !exchange)
    return new SourceUrlProblem('binding needs exchange: the queue is bound to that exchange with it');
  if (exchange === '') return new SourceUrlProblem('exchange, when given, must name an exchange');
  return { ...e, kind: 'amqp', vhost: vhost || '/', queue, exchange: exchange ?? null, binding };
}

function natsSource(e: Endpoint, stream: string, p: Map<string, string>): NatsSource | SourceUrlProblem {
  const consumer = p.get('consumer') ?? '';
  const subject = p.get('subject');
  if (!stream)
    return new SourceUrlProblem(
      `a nats source needs the stream as its path, as in ${e.scheme}://host/EVENTS?consumer=herald`,
    );
  if (!NAME.test(stream)) return new SourceUrlProblem('the stream is 1 to 200 letters, digits, _ or -');
  if (!consumer) return new SourceUrlProblem('a nats source needs ?consumer=<durable name>');
  if (!NAME.test(consumer)) return new SourceUrlProblem('the consumer is 1 to 200 letters, digits, _ or -');
  if (subject !== undefined) {
    if (!subject || subject.split('.').some((t) => t === '') || subject.length > 1024)
      return new SourceUrlProblem(
        `the subject "${subject}" is empty or has an empty token (two dots in a row, or a dot at an end)`,
      );
  }
  return { ...e, kind: 'nats', stream, consumer, subject: subject ?? null };
}

function redisSource(e: Endpoint, db: string, p: Map<string, string>): RedisSource | SourceUrlProblem {
  if (db && !(/^\d{1,9}$/.test(db) && Number(db) <= 2 ** 31 - 1))
    return new SourceUrlProblem(`the database (path) must be a whole number such as /0, got "${db}"`);
  const stream = p.get('stream');
  const group = p.get('group');
  if (!stream) return new SourceUrlProblem('a redis source needs ?stream=<name>');
  if (!group) return new SourceUrlProblem('a redis source needs ?group=<consumer group>');
  if (bytes(stream) > 1024 || bytes(group) > 1024)
    return new SourceUrlProblem('the stream and group names are at most 1024 bytes');
  return { ...e, kind: 'redis', db: Number(db || 0), stream, group };
}

/** The URL as shown and logged: its password (a NATS lone user, a token) as ****. */
export const maskSourcePassword = maskPassword;

/**
 * `given`, a URL whose password is **** (as shown), with the password of `original` put back: only for the same
 * server and user (broker-url.ts's rule). Null otherwise.
 */
export const restoreSourcePassword = (given: string, original: string): string | null =>
  restorePassword(given, original, (raw) => {
    const t = parseSourceUrl(raw);
    return t instanceof SourceUrlProblem ? null : t;
  });

/** Which sources share a connection in a process: broker-url.ts's address key. */
export const sourceAddressKey = (t: SourceTarget): string => brokerAddressKey(t);
