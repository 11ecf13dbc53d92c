/**
 * Broker destination URLs (src/domain/broker-url.ts): what a person gets back for each mistake (the part of the URL
 * named), what a valid one means, the masked form, and which destinations share a connection.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type BrokerTarget,
  brokerAddressKey,
  isBrokerUrlProblem,
  maskPassword,
  parseBrokerUrl,
  restorePassword,
} from '../../../src/domain/broker-url.ts';
import { destinationKind, isBrokerKind } from '../../../src/domain/destination-kind.ts';

function target(raw: string): BrokerTarget {
  const t = parseBrokerUrl(raw);
  if (isBrokerUrlProblem(t)) assert.fail(`${raw}: ${t.message}`);
  return t;
}

const problem = (raw: string): string => {
  const t = parseBrokerUrl(raw);
  assert.ok(isBrokerUrlProblem(t), `${raw} was accepted`);
  assert.equal(t.field, 'destination_url');
  assert.equal(t.code, 'invalid_request');
  return t.message;
};

test('each wrong URL is refused with a message naming the part that is wrong', () => {
  const cases: [string, string | RegExp][] = [
    [
      'kafka://h/t',
      'destination_url: unknown scheme "kafka:"; use http, https, amqp, amqps, nats, tls, redis or rediss',
    ],
    ['no scheme', /unknown scheme missing/],
    ['amqp:host/?exchange=x', 'destination_url: must start with amqp:// and then the host'],
    ['amqp://h/?exchange=x#frag', 'destination_url: must not have a #fragment'],
    ['amqp://h/?exchange=a b', /must not contain spaces/],
    ['amqp:///?exchange=x', /needs a host name, as in amqp:\/\/broker\.example\.com/],
    ['amqp://h:0/?exchange=x', 'destination_url: the port must be a whole number from 1 to 65535, got "0"'],
    ['amqp://h:70000/?exchange=x', /port must be a whole number from 1 to 65535, got "70000"/],
    ['nats://h:abc/s', /port must be a whole number from 1 to 65535, got "abc"/],
    ['amqp://u:%zz@h/?exchange=x', /user name or password has a malformed % escape/],
    ['amqp://h/', /needs \?exchange=<name>, or \?routing_key=<queue> for the default exchange/],
    ['amqp://h/?exchange=', /needs \?exchange=<name>/],
    [`amqp://h/?exchange=${'e'.repeat(256)}`, 'destination_url: the exchange name is at most 255 characters'],
    [`amqp://h/?exchange=x&routing_key=${'é'.repeat(128)}`, /the routing_key is at most 255 bytes/],
    ['amqp://h/?exchange=x&routing_key=a%0Ab', /must not contain control characters/],
    [
      'amqp://h/?exchange=x&routingkey=k',
      /unknown parameter "routingkey" for an amqp destination; use exchange and routing_key/,
    ],
    ['amqp://h/?exchange=x&exchange=y', /the parameter exchange is given twice/],
    ['amqp://h/a/b?exchange=x', /the path must be one segment, the vhost \(write \/ inside it as %2F\)/],
    ['nats://h', /a nats destination needs a subject, as in nats:\/\/host\/orders\.created/],
    [
      'nats://h/a..b',
      'destination_url: the subject "a..b" has an empty token (two dots in a row, or a dot at an end)',
    ],
    ['nats://h/.a', /empty token/],
    ['nats://h/a.', /empty token/],
    ['nats://h/a.*', /must not contain the wildcards \* or >/],
    ['nats://h/a.>', /wildcards/],
    ['nats://h/a%20b', /the subject must not contain spaces/],
    ['nats://h/$JS.API.STREAM.DELETE.X', /subjects starting with \$ are reserved/],
    ['nats://h/a?x=1', /unknown parameter "x" for a nats destination; it takes no parameters/],
    ['redis://h/0', 'destination_url: a redis destination needs ?stream=<name>'],
    ['redis://h/0?stream=', /needs \?stream=<name>/],
    [
      'redis://h/abc?stream=s',
      /the database \(path\) must be a whole number such as \/0 \(0 to 15 on a default Redis\), got "abc"/,
    ],
    ['redis://h/-1?stream=s', /database/],
    ['redis://h/0?stream=s&maxlen=0', 'destination_url: maxlen must be a whole number from 1 to 1000000000'],
    ['redis://h/0?stream=s&maxlen=1000000001', /maxlen must be a whole number from 1 to 1000000000/],
    ['redis://h/0?stream=s&maxlen=1.5', /maxlen/],
    ['redis://h/0?stream=s&maxlen=~10', /maxlen/],
    [`amqp://h/?exchange=x&routing_key=${'k'.repeat(3000)}`, 'destination_url: at most 2048 characters'],
  ];
  for (const [raw, expected] of cases) {
    const message = problem(raw);
    if (typeof expected === 'string') assert.equal(message, expected, raw);
    else assert.match(message, expected, raw);
  }
});

test('no problem message shows the password', () => {
  for (const raw of [
    'amqp://u:s3cr3t@h:99999/?exchange=x',
    'nats://u:s3cr3t@h/a..b',
    'redis://:s3cr3t@h/x?stream=s',
    'redis://:s3cr3t@h/0?stream=s&maxlen=0',
  ]) {
    assert.doesNotMatch(problem(raw), /s3cr3t/, raw);
  }
});

test('valid URLs: defaults, decoded parts, TLS by scheme', () => {
  assert.deepEqual(target('amqp://guest:guest@127.0.0.1/?exchange=orders&routing_key=created'), {
    kind: 'amqp',
    scheme: 'amqp',
    tls: false,
    host: '127.0.0.1',
    port: 5672,
    username: 'guest',
    password: 'guest',
    vhost: '/',
    exchange: 'orders',
    routingKey: 'created',
  });
  const amqps = target('amqps://u:p%40ss@Rabbit.Example.com/prod%2Feu?routing_key=jobs');
  assert.equal(amqps.port, 5671);
  assert.equal(amqps.tls, true);
  assert.equal(amqps.host, 'rabbit.example.com');
  assert.equal(amqps.password, 'p@ss');
  assert.ok(
    amqps.kind === 'amqp' &&
      amqps.vhost === 'prod/eu' &&
      amqps.exchange === '' &&
      amqps.routingKey === 'jobs',
  );
  const fanout = target('amqp://h/?exchange=events');
  assert.ok(fanout.kind === 'amqp' && fanout.routingKey === '');

  const nats = target('nats://u:p@[::1]:4333/orders.created');
  assert.ok(
    nats.kind === 'nats' && nats.subject === 'orders.created' && nats.host === '::1' && nats.port === 4333,
  );
  const tls = target('tls://token@nats.example.com/a.b');
  assert.ok(tls.kind === 'nats' && tls.tls && tls.port === 4222 && tls.username === 'token');

  assert.deepEqual(target('redis://:pw@h:6380/3?stream=events&maxlen=1000'), {
    kind: 'redis',
    scheme: 'redis',
    tls: false,
    host: 'h',
    port: 6380,
    username: '',
    password: 'pw',
    db: 3,
    stream: 'events',
    maxlen: 1000,
  });
  const rediss = target('rediss://h?stream=s');
  assert.ok(
    rediss.kind === 'redis' &&
      rediss.tls &&
      rediss.port === 6379 &&
      rediss.db === 0 &&
      rediss.maxlen === null,
  );
});

test('destinationKind tells broker destinations from http ones, by the scheme alone', () => {
  assert.equal(destinationKind('AMQPS://h'), 'amqp');
  assert.equal(destinationKind('tls://h/s'), 'nats');
  assert.equal(destinationKind('rediss://h'), 'redis');
  assert.equal(destinationKind('https://h'), 'http');
  assert.equal(destinationKind('kafka://h'), null);
  assert.equal(isBrokerKind(destinationKind('nats://h/s')), true);
  assert.equal(isBrokerKind(destinationKind('http://h/')), false);
  assert.equal(isBrokerKind(destinationKind('')), false);
});

test('maskPassword hides the password, keeps the user and everything else', () => {
  assert.equal(
    maskPassword('amqp://guest:guest@h:5672/v?exchange=x'),
    'amqp://guest:****@h:5672/v?exchange=x',
  );
  assert.equal(maskPassword('redis://:s3cr3t@h/0?stream=s'), 'redis://:****@h/0?stream=s');
  assert.equal(maskPassword('nats://u:p%40ss@h/a.b'), 'nats://u:****@h/a.b');
  assert.equal(maskPassword('nats://tok3n@h/a.b'), 'nats://****@h/a.b', 'a lone NATS user is a token');
  assert.equal(maskPassword('amqp://user@h/?exchange=x'), 'amqp://user@h/?exchange=x');
  assert.equal(maskPassword('redis://h/0?stream=s'), 'redis://h/0?stream=s');
  assert.equal(
    maskPassword('amqp://u:p@ss@h/?exchange=x'),
    'amqp://u:****@h/?exchange=x',
    'an unescaped @ too',
  );
  assert.equal(
    maskPassword('amqp://u:bad%zz@h:99999/'),
    'amqp://u:****@h:99999/',
    'even when it does not parse',
  );
});

test('restorePassword puts the password back behind **** for the same server and user only', () => {
  const original = 'amqp://guest:p%40ss@rabbit.example.com/?routing_key=jobs';
  assert.equal(
    restorePassword('amqp://guest:****@rabbit.example.com:5672/prod?exchange=x&routing_key=k', original),
    'amqp://guest:p%40ss@rabbit.example.com:5672/prod?exchange=x&routing_key=k',
    'vhost, exchange and routing key may change; the default port written out is the same port',
  );
  assert.equal(
    restorePassword('nats://****@h/b.c', 'nats://tok3n@h/a.b'),
    'nats://tok3n@h/b.c',
    'a NATS token is kept like a password',
  );
  assert.equal(
    restorePassword('redis://:****@h/1?stream=t&maxlen=10', 'redis://:s3cret@h/0?stream=s'),
    'redis://:s3cret@h/1?stream=t&maxlen=10',
  );
  for (const elsewhere of [
    'amqp://guest:****@evil.example.com/?routing_key=jobs',
    'amqp://guest:****@rabbit.example.com:5673/?routing_key=jobs',
    'amqps://guest:****@rabbit.example.com/?routing_key=jobs',
    'amqp://admin:****@rabbit.example.com/?routing_key=jobs',
  ])
    assert.equal(restorePassword(elsewhere, original), null, `${elsewhere} names another server or user`);
  assert.equal(
    restorePassword('redis://:****@h/0?stream=s', 'redis://h/0?stream=s'),
    null,
    'no password to keep',
  );
});

test('an IPv6 host in brackets may leave out its port', () => {
  const t = target('redis://[::1]/0?stream=s');
  assert.ok(t.host === '::1' && t.port === 6379);
});

test('destinations share a connection when scheme, credentials, host, port and vhost/db are the same', () => {
  const key = (raw: string) => brokerAddressKey(target(raw));
  // Exchanges, routing keys, subjects, streams and maxlen are per message, not per connection.
  assert.equal(key('amqp://u:p@h/?exchange=a'), key('amqp://u:p@H:5672/%2F?exchange=b&routing_key=k'));
  assert.equal(key('nats://h/a.b'), key('nats://h:4222/c'));
  assert.equal(key('redis://:p@h/0?stream=a'), key('redis://:p@h:6379?stream=b&maxlen=5'));
  // Anything a connection is bound to makes another one.
  assert.notEqual(key('amqp://u:p@h/?exchange=a'), key('amqp://u:q@h/?exchange=a'));
  assert.notEqual(key('amqp://u:p@h/?exchange=a'), key('amqp://v:p@h/?exchange=a'));
  assert.notEqual(key('amqp://u:p@h/?exchange=a'), key('amqps://u:p@h:5672/?exchange=a'));
  assert.notEqual(key('amqp://u:p@h/?exchange=a'), key('amqp://u:p@h/other?exchange=a'));
  assert.notEqual(key('redis://h/0?stream=a'), key('redis://h/1?stream=a'));
  assert.notEqual(key('nats://h/a'), key('nats://h:4223/a'));
  assert.notEqual(key('nats://h/a'), key('tls://h/a'));
  // The key may be shown: it holds no password.
  assert.doesNotMatch(key('amqp://u:s3cr3t@h/?exchange=a'), /s3cr3t/);
});
