/**
 * Every connection goes where the destination guard said, end to end through a Herald whose guard resolves names
 * with the test's resolver (names the system cannot resolve; 127.0.0.1 allowed by ALLOWED_DESTINATION_CIDRS, every
 * other private address refused). A Redis destination by name is published to at the address the guard approved;
 * once the name points at a refused address and the connection is cut, the client's reconnect is refused and the
 * next delivery fails at once with destination_not_allowed, nothing reaching the broker. A name that gives no
 * address is a failed attempt that is retried, never an allowed one: for a broker, an HTTP webhook and the operator's
 * webhook (OPERATOR_WEBHOOK_URL) alike, each delivered once its name resolves. Run on SQLite and, in the second
 * pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createClient } from '@redis/client';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { TestDns } from '../support/test-dns.ts';

const RUN = randomBytes(4).toString('hex');
const OPS = `ops-${RUN}.test`;
const dns = new TestDns();
let h: TestHerald;
let receiver: TestReceiver;
let operator: TestReceiver;
let proxy: TcpProxy;
let redis: ReturnType<typeof createClient>;
const streams: string[] = [];

before(async () => {
  receiver = await TestReceiver.start();
  operator = await TestReceiver.start('/operator');
  proxy = await TcpProxy.start({ host: '127.0.0.1', port: 6379 });
  redis = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await redis.connect();
  h = await startTestHerald(
    {
      ALLOW_PRIVATE_DESTINATIONS: 'false',
      ALLOWED_DESTINATION_CIDRS: '127.0.0.1/32',
      RETRY_SCHEDULE: '0.3,0.3,0.3,0.3,0.3',
      DELIVERY_TIMEOUT_MS: '2000',
      // Its name gives no address until a test says otherwise.
      OPERATOR_WEBHOOK_URL: `http://${OPS}:${new URL(operator.url).port}/operator`,
    },
    { resolve: dns.lookup },
  );
});

after(async () => {
  await h.close();
  if (streams.length > 0) await redis.del(streams);
  await redis.close();
  await Promise.all([receiver.close(), operator.close(), proxy.close()]);
});

const stream = () => {
  const name = `herald-pinned-${RUN}-${streams.length}`;
  streams.push(name);
  return name;
};

async function publish(ins: string): Promise<void> {
  const r = await h.publish(ins, { event: 'message', payload: messagePayload() });
  assert.equal(r.status, 202, JSON.stringify(r.body));
}

/** The delivery of `webhook` in the instance's log (the admin sees the operator's too) once `ready` says so. */
const deliveryWhen = (ins: string, webhook: string, ready: (d: any) => boolean, what: string) =>
  eventually(
    async () => {
      const r = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${webhook}`);
      const d = r.body.deliveries?.[0];
      return d && ready(d) ? d : undefined;
    },
    15_000,
    what,
  );

test('a broker by name: published at the approved address; rebound and cut, its reconnect is refused and the delivery fails at once', async () => {
  const name = `redis-${RUN}.test`;
  dns.set(name, ['127.0.0.1']);
  const key = stream();
  const ins = await h.createInstance('pinned');
  const whk = await h.createWebhook(ins, {
    destination_url: `redis://${name}:${proxy.port}/0?stream=${key}`,
    events: ['message'],
  });
  await publish(ins);
  const delivered = await deliveryWhen(ins, whk, (d) => d.status === 'delivered', 'the first delivery');
  assert.equal(delivered.attempt_count, 1);
  assert.equal(await redis.xLen(key), 1);
  assert.equal(proxy.accepted, 1);

  dns.set(name, ['10.0.0.1']);
  const asked = dns.asked(name);
  proxy.cut();
  // The client's own reconnect asked the guard, which refused: the connection is down and goes nowhere.
  await eventually(async () => (dns.asked(name) > asked ? true : undefined), 10_000, 'a reconnect');
  await publish(ins);
  const failed = await deliveryWhen(ins, whk, (d) => d.status === 'failed', 'the refused delivery');
  assert.deepEqual(
    [failed.failure_reason, failed.attempt_count, failed.last_error, failed.next_attempt_at],
    ['destination_not_allowed', 1, 'destination_not_allowed', null],
  );
  assert.equal(await redis.xLen(key), 1, 'nothing more reached the stream');
  assert.equal(proxy.accepted, 1, 'no reconnect went back to the address checked before');

  // That failure is reported to the operator, whose name gives no address yet: retried, not sent, not dropped.
  const report = await deliveryWhen(
    ins,
    'whk_operator',
    (d) => d.attempt_count >= 1,
    "the operator's report of the failure",
  );
  assert.deepEqual(
    [report.event, report.status, report.last_error],
    ['delivery.failed', 'pending', 'dns_error'],
  );
  assert.notEqual(report.next_attempt_at, null);
  assert.equal(operator.received.length, 0);
  dns.set(OPS, ['127.0.0.1']);
  await deliveryWhen(ins, 'whk_operator', (d) => d.status === 'delivered', "the operator's report delivered");
  assert.equal(operator.received.length, 1);
  assert.equal((operator.received[0].body as { event: string }).event, 'delivery.failed');
});

test('a name that gives no address is a failed attempt, retried, and delivered once it resolves (broker and HTTP)', async () => {
  const http = `http-${RUN}.test`;
  const broker = `broker-${RUN}.test`;
  dns.set(http, []); // an empty answer
  const key = stream();
  const ins = await h.createInstance('unresolved');
  // Saved although neither resolves now: the guard judges them at every connection.
  const hook = await h.createWebhook(ins, {
    destination_url: `http://${http}:${new URL(receiver.url).port}/hook`,
    events: ['message'],
  });
  const queue = await h.createWebhook(ins, {
    destination_url: `redis://${broker}:6379/0?stream=${key}`,
    events: ['message'],
  });
  await publish(ins);
  const first = (d: any) => d.attempt_count >= 1;
  const [overHttp, overBroker] = await Promise.all([
    deliveryWhen(ins, hook, first, 'the HTTP attempt'),
    deliveryWhen(ins, queue, first, 'the broker attempt'),
  ]);
  assert.deepEqual([overHttp.status, overHttp.last_error], ['pending', 'dns_error']);
  assert.deepEqual(
    [overBroker.status, overBroker.last_error],
    ['pending', `could not resolve ${broker}: getaddrinfo ENOTFOUND ${broker}`],
  );
  assert.equal(receiver.received.length, 0);

  dns.set(http, ['127.0.0.1']);
  dns.set(broker, ['127.0.0.1']);
  const done = (d: any) => d.status === 'delivered';
  await Promise.all([
    deliveryWhen(ins, hook, done, 'the HTTP delivery'),
    deliveryWhen(ins, queue, done, 'the broker delivery'),
  ]);
  assert.equal(receiver.received.length, 1);
  assert.equal(await redis.xLen(key), 1);
});
