/**
 * Every broker connection goes where the destination guard said (src/net/brokers/pinning.ts), for each of the three
 * publishers, on the machine's brokers behind a proxy of the test's own. Names resolve only through the guard's
 * injected resolver: the system cannot resolve them, so a client that looked a name up by itself could not connect
 * at all. Once connected, the name is made to fail and then to point at a refused address, and the connection is
 * cut: each reconnect of the client's own is checked again, so attempts answer in those words and the proxy (the
 * address checked before) sees no new connection, until the name resolves to an allowed address again. TLS goes to
 * the approved address and still verifies the broker's name.
 */
import assert from 'node:assert/strict';
import { lookup as systemLookup } from 'node:dns/promises';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import { type BrokerTarget, isBrokerUrlProblem, parseBrokerUrl } from '../../../src/domain/broker-url.ts';
import { AddressAllowList, parseCidrList } from '../../../src/net/address-allow-list.ts';
import { AmqpPublisher } from '../../../src/net/brokers/amqp.ts';
import type { ConnectionPool } from '../../../src/net/brokers/connections.ts';
import { NatsPublisher } from '../../../src/net/brokers/nats.ts';
import type { BrokerAnswer, BrokerMessage, PublisherOptions } from '../../../src/net/brokers/publisher.ts';
import { RedisPublisher } from '../../../src/net/brokers/redis.ts';
import type { DestinationPolicy } from '../../../src/net/destination.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';
import { TestDns } from '../../support/test-dns.ts';
import { eventually, message, PrivateServer, suffix } from './support.ts';
import { type Issued, TestAuthority, TlsTerminator } from './tls.ts';

const RUN = suffix();

const dns = new TestDns();
let names = 0;
const freshName = () => `n${++names}-${RUN}.broker.test`;

/** 127.0.0.1 allowed (the brokers live there), every other private address refused, names by the test's DNS. */
const destinations: DestinationPolicy = {
  allowPrivate: false,
  allow: new AddressAllowList(parseCidrList('127.0.0.1/32')),
  lookup: dns.lookup,
};
const BACKOFF = { firstMs: 50, maxMs: 200 };

interface Publisher {
  publish(t: BrokerTarget, m: BrokerMessage, timeoutMs: number): Promise<BrokerAnswer>;
  connections: ConnectionPool<never, unknown>;
  close(): Promise<void>;
}

function target(url: string): BrokerTarget {
  const t = parseBrokerUrl(url);
  assert.ok(!isBrokerUrlProblem(t), url);
  return t as BrokerTarget;
}

const QUEUE = `herald-pin-${RUN}`;
const STREAM = `HERALD_PIN_${RUN.toUpperCase()}`;
const SUBJECT = `herald.pin.${RUN}`;
const REDIS_STREAM = `herald-pin-${RUN}`;

/** Each broker: its shared port, its destination URL at host:port (TLS or not), and a publisher. */
const rigs = [
  {
    kind: 'amqp',
    port: 5672,
    url: (host: string, port: number, tls = false) =>
      `${tls ? 'amqps' : 'amqp'}://guest:guest@${host}:${port}/%2F?exchange=&routing_key=${QUEUE}`,
    make: (o: Omit<PublisherOptions, 'destinations'> = {}) => new AmqpPublisher({ destinations, ...o }),
  },
  {
    kind: 'nats',
    port: 4222,
    url: (host: string, port: number, tls = false) =>
      `${tls ? 'tls' : 'nats'}://${host}:${port}/${SUBJECT}.x`,
    make: (o: Omit<PublisherOptions, 'destinations'> = {}) => new NatsPublisher({ destinations, ...o }),
  },
  {
    kind: 'redis',
    port: 6379,
    url: (host: string, port: number, tls = false) =>
      `${tls ? 'rediss' : 'redis'}://${host}:${port}/0?stream=${REDIS_STREAM}`,
    make: (o: Omit<PublisherOptions, 'destinations'> = {}) => new RedisPublisher({ destinations, ...o }),
  },
] as const;

let rabbit: Connection;
let nc: NatsConnection;
let authority: TestAuthority;
let right: Issued;
let wrong: Issued;

before(async () => {
  // The premise: the system resolver knows none of the test's names.
  await assert.rejects(systemLookup(freshName()), /ENOTFOUND|EAI_AGAIN/);
  rabbit = new Connection({ hostname: '127.0.0.1', port: 5672, username: 'guest', password: 'guest' });
  rabbit.on('error', () => {});
  await rabbit.onConnect(5_000);
  await rabbit.queueDeclare({ queue: QUEUE, durable: false, autoDelete: false });
  nc = await connect({ servers: '127.0.0.1:4222' });
  await (await jetstreamManager(nc)).streams.add({ name: STREAM, subjects: [`${SUBJECT}.>`] });
  authority = TestAuthority.create();
  right = authority.issue('tls.broker.test');
  wrong = authority.issue('other.broker.test');
});

after(async () => {
  await rabbit.queueDelete({ queue: QUEUE }).catch(() => {});
  await rabbit.close();
  await (await jetstreamManager(nc)).streams.delete(STREAM).catch(() => {});
  await nc.close();
  const redis = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await redis.connect();
  await redis.del(REDIS_STREAM);
  await redis.close();
  authority.remove();
});

/** Publishes until `check` accepts an answer (each attempt within 1 s), returning that answer. */
const answerWhen = (pub: Publisher, t: BrokerTarget, check: (a: BrokerAnswer) => boolean, what: string) =>
  eventually(
    async () => {
      const a = await pub.publish(t, message(), 1_000);
      return check(a) ? a : undefined;
    },
    8_000,
    what,
  );
const failedWith = (a: BrokerAnswer) => (a.kind === 'ack' ? '' : a.error);

for (const rig of rigs) {
  describe(rig.kind, () => {
    test('connects to the address the guard approved, and checks each reconnect of its own again', async () => {
      const name = freshName();
      dns.set(name, ['127.0.0.1']);
      const proxy = await TcpProxy.start({ host: '127.0.0.1', port: rig.port });
      const pub = rig.make({ pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 }) as unknown as Publisher;
      try {
        const t = target(rig.url(name, proxy.port));
        const first = await pub.publish(t, message(), 3_000);
        assert.equal(first.kind, 'ack', `the broker acknowledged it: ${failedWith(first)}`);
        assert.equal(proxy.accepted, 1);

        // The name stops resolving, then the connection is cut: the client's reconnect finds no address.
        dns.set(name, Object.assign(new Error(`queryA ESERVFAIL ${name}`), { code: 'ESERVFAIL' }));
        proxy.cut();
        const unresolved = await answerWhen(
          pub,
          t,
          (a) => failedWith(a).startsWith('could not resolve'),
          'an attempt that says the name does not resolve',
        );
        assert.equal(failedWith(unresolved), `could not resolve ${name}: queryA ESERVFAIL ${name}`);

        // The name now points at a refused address: every reconnect is refused, none goes anywhere.
        dns.set(name, ['10.0.0.1']);
        await answerWhen(pub, t, (a) => failedWith(a) === 'destination_not_allowed', 'a refused attempt');
        const tries = dns.asked(name);
        await eventually(
          () => (dns.asked(name) >= tries + 2 ? true : undefined),
          5_000,
          'the client trying again, through the guard',
        );
        assert.deepEqual(
          await pub.publish(t, message(), 1_000),
          { kind: 'failed', error: 'destination_not_allowed' },
          'still refused',
        );
        assert.equal(proxy.accepted, 1, 'no reconnect went back to the address checked before');

        // Resolving to an allowed address again, the same connection is back.
        dns.set(name, ['127.0.0.1']);
        await answerWhen(
          pub,
          t,
          (a) => a.kind === 'ack',
          'an acknowledged publish after the name is allowed again',
        );
        assert.equal(proxy.accepted, 2);
        assert.equal(pub.connections.opened, 1, "the client's own reconnect, not a new connection");
      } finally {
        await pub.close();
        await proxy.close();
      }
    });

    test('a name that gives no address, or a refused one, is never dialled', async () => {
      const proxy = await TcpProxy.start({ host: '127.0.0.1', port: rig.port });
      const pub = rig.make({ pool: { backoff: BACKOFF } }) as unknown as Publisher;
      try {
        const unknown = freshName();
        const empty = freshName();
        dns.set(empty, []);
        const refused = freshName();
        dns.set(refused, ['127.0.0.1', '10.0.0.1']); // one refused address refuses the name
        const cases: [string, string][] = [
          [unknown, `could not resolve ${unknown}: getaddrinfo ENOTFOUND ${unknown}`],
          [empty, `could not resolve ${empty}: the name has no address`],
          [refused, 'destination_not_allowed'],
          ['10.0.0.1', 'destination_not_allowed'],
        ];
        for (const [host, error] of cases) {
          const t = target(rig.url(host, proxy.port));
          assert.deepEqual(await pub.publish(t, message(), 2_000), { kind: 'failed', error }, host);
          // While its address backs off, a refusal is still the bare code the delivery fails on at once.
          const again = failedWith(await pub.publish(t, message(), 2_000));
          if (error === 'destination_not_allowed') assert.equal(again, error);
          else assert.match(again, /^could not resolve .* \(next connection attempt in \d+ ms\)$/);
        }
        assert.equal(proxy.accepted, 0, 'nothing was dialled');
      } finally {
        await pub.close();
        await proxy.close();
      }
    });

    test('TLS goes to the approved address and verifies the broker name', async () => {
      const name = 'tls.broker.test';
      dns.set(name, ['127.0.0.1']);
      const tls = await tlsServer(rig.kind, right, rig.port);
      const impostor = await tlsServer(rig.kind, wrong, rig.port);
      const pub = rig.make({ pool: { backoff: BACKOFF } }) as unknown as Publisher;
      try {
        const answer = await pub.publish(target(rig.url(name, tls.port, true)), message(), 3_000);
        // NATS: the private server has no stream for the subject, which it can only say once TLS is up.
        if (rig.kind === 'nats')
          assert.deepEqual(answer, { kind: 'failed', error: `no stream for subject "${SUBJECT}.x"` });
        else assert.equal(answer.kind, 'ack', failedWith(answer));
        if (tls.serverNames) assert.deepEqual(tls.serverNames, [name], 'the name was sent, not the address');

        const refused = await pub.publish(target(rig.url(name, impostor.port, true)), message(), 3_000);
        assert.match(failedWith(refused), /ERR_TLS_CERT_ALTNAME_INVALID/, failedWith(refused));
      } finally {
        await pub.close();
        await tls.close();
        await impostor.close();
      }
    });
  });
}

/**
 * A TLS endpoint for the broker kind presenting `issued`: a terminator in front of the shared broker for amqps and
 * rediss; for NATS, whose TLS starts inside its protocol, a private nats-server of the test's own.
 */
async function tlsServer(
  kind: string,
  issued: Issued,
  port: number,
): Promise<{ port: number; serverNames?: (string | false | null)[]; close(): Promise<void> }> {
  if (kind !== 'nats') return TlsTerminator.start(issued, port);
  const server = await PrivateServer.nats([
    '--tls',
    '--tlscert',
    issued.certFile,
    '--tlskey',
    issued.keyFile,
  ]);
  return { port: server.port, close: () => server.stop() };
}
