/**
 * Broker destinations (RabbitMQ, NATS JetStream, Redis Streams) as a webhook's destination_url: parsed and checked
 * here, with no I/O, so the API can refuse a wrong one at save time naming the part that is wrong.
 *
 *   amqp[s]://user:pass@host:port/vhost?exchange=E&routing_key=K   (5672, amqps 5671; vhost "/" when none)
 *   nats://user:pass@host:port/subject, tls://… for TLS           (4222; a lone user is a token)
 *   redis[s]://[user]:pass@host:port/db?stream=S&maxlen=N          (6379; db 0 when none; no trimming without maxlen)
 *
 * With no exchange (or exchange=) AMQP publishes to the default exchange, which routes by queue name: the
 * routing_key is then the queue's name and is required. With a named exchange it may be empty (fanout, headers).
 */
import { createHash } from 'node:crypto';

export type BrokerKind = 'amqp' | 'nats' | 'redis';

export interface Endpoint {
  scheme: 'amqp' | 'amqps' | 'nats' | 'tls' | 'redis' | 'rediss';
  tls: boolean;
  /** Lowercase; an IPv6 address without its brackets. */
  host: string;
  port: number;
  username: string;
  password: string;
}
export interface AmqpTarget extends Endpoint {
  kind: 'amqp';
  vhost: string;
  exchange: string;
  routingKey: string;
}
export interface NatsTarget extends Endpoint {
  kind: 'nats';
  subject: string;
}
export interface RedisTarget extends Endpoint {
  kind: 'redis';
  db: number;
  stream: string;
  /** Approximate cap (MAXLEN ~); null: the stream is never trimmed. */
  maxlen: number | null;
}
export type BrokerTarget = AmqpTarget | NatsTarget | RedisTarget;

/** The same shape as the HTTP destination's problems (net/destination.ts), so the API answers them alike. */
export interface BrokerUrlProblem {
  field: 'destination_url';
  code: 'invalid_request';
  message: string;
}

const SCHEMES: Record<string, { kind: BrokerKind; tls: boolean; port: number }> = {
  amqp: { kind: 'amqp', tls: false, port: 5672 },
  amqps: { kind: 'amqp', tls: true, port: 5671 },
  nats: { kind: 'nats', tls: false, port: 4222 },
  tls: { kind: 'nats', tls: true, port: 4222 },
  redis: { kind: 'redis', tls: false, port: 6379 },
  rediss: { kind: 'redis', tls: true, port: 6379 },
};
const PARAMS: Record<BrokerKind, string[]> = {
  amqp: ['exchange', 'routing_key'],
  nats: [],
  redis: ['stream', 'maxlen'],
};
const MAX_LENGTH = 2048;
const SHORTSTR = 255; // AMQP short strings (exchange, routing key) are at most 255 bytes
const MAX_MAXLEN = 1_000_000_000;

const problem = (message: string): BrokerUrlProblem => ({
  field: 'destination_url',
  code: 'invalid_request',
  message: `destination_url: ${message}`,
});
export const isBrokerUrlProblem = (x: BrokerTarget | BrokerUrlProblem): x is BrokerUrlProblem => 'field' in x;

/** A URL's scheme, lowercase, or null when it names none. */
export const schemeOf = (raw: string): string | null =>
  /^([a-z][a-z0-9+.-]*):/i.exec(raw)?.[1].toLowerCase() ?? null;

/** The broker a scheme names (destination-kind.ts decides with it), or undefined for any other scheme. */
export const brokerScheme = (scheme: string | null): BrokerKind | undefined =>
  scheme !== null && Object.hasOwn(SCHEMES, scheme) ? SCHEMES[scheme].kind : undefined;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const decode = (s: string): string | null => {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
};

export function parseBrokerUrl(raw: string): BrokerTarget | BrokerUrlProblem {
  if (typeof raw !== 'string' || raw.length === 0)
    return problem('must be a URL such as amqp://host/?exchange=…');
  if (raw.length > MAX_LENGTH) return problem(`at most ${MAX_LENGTH} characters`);
  const scheme = schemeOf(raw);
  const known = scheme ? SCHEMES[scheme] : undefined;
  if (!scheme || !known) {
    const shown = scheme ? `"${scheme}:"` : 'missing';
    return problem(`unknown scheme ${shown}; use http, https, amqp, amqps, nats, tls, redis or rediss`);
  }
  // Only "scheme://authority…": WHATWG URL would also take `amqp:host` as a path.
  const parts = /^[^:]+:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/s.exec(raw);
  if (!parts) return problem(`must start with ${scheme}:// and then the host`);
  const [, authority, path, , fragment] = parts;
  if (fragment !== undefined) return problem('must not have a #fragment');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\x00-\x20\x7f]/.test(raw))
    return problem('must not contain spaces or control characters (write %20)');
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  const port = /^(?:\[[^\]]*\]|[^:[\]]*):(.*)$/.exec(hostPort)?.[1];
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && +port >= 1 && +port <= 65535))
    return problem(`the port must be a whole number from 1 to 65535, got "${port}"`);
  if (!URL.canParse(raw)) return problem('is not a valid URL (check the host name and any % escapes)');
  const url = new URL(raw);
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (!host) return problem(`needs a host name, as in ${scheme}://broker.example.com`);
  const username = decode(url.username);
  const password = decode(url.password);
  if (username === null || password === null)
    return problem('the user name or password has a malformed % escape');
  const endpoint: Endpoint = {
    scheme: scheme as Endpoint['scheme'],
    tls: known.tls,
    host,
    port: port ? Number(port) : known.port,
    username,
    password,
  };

  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (!PARAMS[known.kind].includes(name)) {
      const allowed = PARAMS[known.kind];
      const hint = allowed.length ? `; use ${allowed.join(' and ')}` : '; it takes no parameters';
      const article = known.kind === 'amqp' ? 'an' : 'a';
      return problem(`unknown parameter "${name}" for ${article} ${known.kind} destination${hint}`);
    }
    if (params.has(name)) return problem(`the parameter ${name} is given twice`);
    params.set(name, value);
  }
  const segments = path.split('/').slice(1);
  if (segments.length > 1) {
    const what = { amqp: 'vhost', nats: 'subject', redis: 'database number' }[known.kind];
    return problem(`the path must be one segment, the ${what} (write / inside it as %2F)`);
  }
  const segment = decode(segments[0] ?? '');
  if (segment === null) return problem('the path has a malformed % escape');

  if (known.kind === 'amqp') return amqpTarget(endpoint, segment, params);
  if (known.kind === 'nats') return natsTarget(endpoint, segment);
  return redisTarget(endpoint, segment, params);
}

function amqpTarget(e: Endpoint, vhost: string, params: Map<string, string>): AmqpTarget | BrokerUrlProblem {
  const exchange = params.get('exchange') ?? '';
  const routingKey = params.get('routing_key') ?? '';
  if (bytes(vhost) > SHORTSTR) return problem('the vhost is at most 255 characters');
  if (bytes(exchange) > SHORTSTR) return problem('the exchange name is at most 255 characters');
  if (bytes(routingKey) > SHORTSTR) return problem('the routing_key is at most 255 bytes');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\x00-\x1f\x7f]/.test(exchange + routingKey + vhost))
    return problem('the vhost, exchange and routing_key must not contain control characters');
  if (!exchange && !routingKey)
    return problem(
      'an amqp destination needs ?exchange=<name>, or ?routing_key=<queue> for the default exchange',
    );
  return { ...e, kind: 'amqp', vhost: vhost || '/', exchange, routingKey };
}

function natsTarget(e: Endpoint, subject: string): NatsTarget | BrokerUrlProblem {
  if (!subject) return problem(`a nats destination needs a subject, as in ${e.scheme}://host/orders.created`);
  if (subject.length > 1024) return problem('the subject is at most 1024 characters');
  if (/[\s\0]/.test(subject)) return problem('the subject must not contain spaces');
  if (subject.split('.').some((t) => t === ''))
    return problem(`the subject "${subject}" has an empty token (two dots in a row, or a dot at an end)`);
  if (/[*>]/.test(subject))
    return problem(
      'the subject must not contain the wildcards * or >: a message is published to one subject',
    );
  if (subject.startsWith('$')) return problem('subjects starting with $ are reserved for the server');
  return { ...e, kind: 'nats', subject };
}

function redisTarget(e: Endpoint, db: string, params: Map<string, string>): RedisTarget | BrokerUrlProblem {
  if (db && !(/^\d{1,9}$/.test(db) && Number(db) <= 2 ** 31 - 1))
    return problem(
      `the database (path) must be a whole number such as /0 (0 to 15 on a default Redis), got "${db}"`,
    );
  const stream = params.get('stream');
  if (!stream) return problem('a redis destination needs ?stream=<name>');
  if (bytes(stream) > 1024) return problem('the stream name is at most 1024 bytes');
  const maxlen = params.get('maxlen');
  if (maxlen !== undefined && !(/^\d{1,10}$/.test(maxlen) && +maxlen >= 1 && +maxlen <= MAX_MAXLEN))
    return problem('maxlen must be a whole number from 1 to 1000000000');
  return {
    ...e,
    kind: 'redis',
    db: Number(db || 0),
    stream,
    maxlen: maxlen === undefined ? null : Number(maxlen),
  };
}

/** A URL's scheme with its // (1) and its user information (2), when it has some. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)@/i;

/**
 * The URL as it may be shown: the password replaced by ****, the user kept. A NATS URL's lone user is a token,
 * so it is masked too. Works on any text, even one that does not parse.
 */
export function maskPassword(raw: string): string {
  const m = USERINFO.exec(raw);
  if (!m) return raw;
  const userinfo = m[2];
  const colon = userinfo.indexOf(':');
  const kind = brokerScheme(schemeOf(raw));
  const masked =
    colon >= 0 ? `${userinfo.slice(0, colon)}:****` : kind === 'nats' && userinfo ? '****' : userinfo;
  return `${m[1]}${masked}@${raw.slice(m[0].length)}`;
}

/**
 * `masked`, a URL whose password is **** (as shown), with the password of `original` put back: only when both go to
 * the same server as the same user (scheme, host, port, user), so that **** never carries a password elsewhere.
 * The rest (vhost, exchange, routing key, subject, database, stream, maxlen) may differ. Null otherwise.
 */
export function restorePassword(
  masked: string,
  original: string,
  parse: (raw: string) => Endpoint | null = (raw) => {
    const t = parseBrokerUrl(raw);
    return isBrokerUrlProblem(t) ? null : t;
  },
): string | null {
  const shown = parse(maskPassword(original));
  const given = parse(masked);
  if (shown === null || given === null) return null;
  const same = (['scheme', 'host', 'port', 'username', 'password'] as const).every(
    (k) => shown[k] === given[k],
  );
  const credentials = USERINFO.exec(original)?.[2];
  const m = USERINFO.exec(masked);
  if (!same || !m || credentials === undefined) return null;
  return `${m[1]}${credentials}@${masked.slice(m[0].length)}`;
}

/**
 * Which destinations share a connection: scheme, credentials, host, port, and the vhost (AMQP) or database
 * (Redis), which are fixed per connection. The password enters as a digest, so the key may be shown or logged.
 */
export function brokerAddressKey(
  t: Endpoint & ({ kind: 'amqp'; vhost: string } | { kind: 'nats' } | { kind: 'redis'; db: number }),
): string {
  const secret = createHash('sha256').update(t.password).digest('hex').slice(0, 16);
  const host = t.host.includes(':') ? `[${t.host}]` : t.host;
  const scope = t.kind === 'amqp' ? `/${encodeURIComponent(t.vhost)}` : t.kind === 'redis' ? `/${t.db}` : '';
  return `${t.scheme}://${encodeURIComponent(t.username)}:${t.password ? secret : ''}@${host}:${t.port}${scope}`;
}

/** host:port as error texts name it. */
export const brokerAddress = (t: BrokerTarget): string =>
  `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
