/**
 * The RabbitMQ publisher (src/net/brokers/amqp.ts) against the machine's RabbitMQ (127.0.0.1:5672, guest/guest):
 * what a consumer receives, what a failed attempt says, one connection per address, the idle close, and what
 * happens when the connection is cut or the broker is away (through a TCP proxy of the test's own). Every
 * exchange and queue is named per run and deleted afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { type AmqpTarget, isBrokerUrlProblem, parseBrokerUrl } from '../../../src/domain/broker-url.ts';
import { AmqpPublisher } from '../../../src/net/brokers/amqp.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';
import {
  eventually,
  failingFastWhileAway,
  freePort,
  LOOPBACK,
  message,
  oneConnectionPerAddress,
  publishThroughCuts,
  suffix,
  TIMEOUT,
} from './support.ts';

const RUN = suffix();
const BACKOFF = { firstMs: 50, maxMs: 500 };
let admin: Connection;
const exchanges: string[] = [];
const queues: string[] = [];

function target(raw: string): AmqpTarget {
  const t = parseBrokerUrl(raw);
  assert.ok(!isBrokerUrlProblem(t) && t.kind === 'amqp', raw);
  return t as AmqpTarget;
}

/** A direct exchange, and (unless unbound) a queue bound to it with routing key "k". */
async function exchange(opts: { bound?: boolean; queueArgs?: Record<string, unknown> } = {}) {
  const name = `herald-test-${RUN}-${suffix()}`;
  await admin.exchangeDeclare({ exchange: name, type: 'direct' });
  exchanges.push(name);
  if (opts.bound === false) return { exchange: name, queue: '' };
  await admin.queueDeclare({ queue: name, arguments: opts.queueArgs });
  queues.push(name);
  await admin.queueBind({ queue: name, exchange: name, routingKey: 'k' });
  return { exchange: name, queue: name };
}

/** Every message in the queue, read by a real consumer until `count` arrived (or the deadline). */
async function consume(queue: string, count: number): Promise<AsyncMessage[]> {
  const got: AsyncMessage[] = [];
  const consumer = admin.createConsumer({ queue, noAck: true }, (msg) => {
    got.push(msg);
  });
  try {
    await eventually(() => (got.length >= count ? true : undefined), 10_000, `${count} messages in ${queue}`);
    return got;
  } finally {
    await consumer.close();
  }
}

before(async () => {
  admin = new Connection({ hostname: '127.0.0.1', port: 5672, username: 'guest', password: 'guest' });
  admin.on('error', () => {});
  await admin.onConnect(5_000);
});

after(async () => {
  for (const queue of queues) await admin.queueDelete({ queue }).catch(() => {});
  for (const name of exchanges) await admin.exchangeDelete({ exchange: name }).catch(() => {});
  await admin.close();
});

test('delivers the exact body, its headers, the event id as message_id, persistent JSON', async () => {
  const { exchange: ex, queue } = await exchange();
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const m = message();
    const answer = await pub.publish(
      target(`amqp://guest:guest@127.0.0.1/?exchange=${ex}&routing_key=k`),
      m,
      5_000,
    );
    assert.deepEqual(answer, { kind: 'ack', words: 'broker_ack' });
    const [got] = await consume(queue, 1);
    assert.equal(got.messageId, m.event_id);
    assert.equal(got.contentType, 'application/json');
    assert.equal(got.durable, true, 'persistent (delivery mode 2)');
    assert.deepEqual(got.headers, m.headers);
    assert.equal(got.timestamp, Number(m.timestamp));
    // The reading client decodes application/json: the body compares as the canonical JSON it was sent as.
    assert.equal(JSON.stringify(got.body), m.body);
  } finally {
    await pub.close();
  }
});

test('the default exchange routes by queue name', async () => {
  const { queue } = await exchange();
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const m = message();
    const answer = await pub.publish(target(`amqp://guest:guest@127.0.0.1/?routing_key=${queue}`), m, 5_000);
    assert.equal(answer.kind, 'ack');
    const [got] = await consume(queue, 1);
    assert.equal(got.messageId, m.event_id);
  } finally {
    await pub.close();
  }
});

test('no queue bound: the broker returns the message, and the attempt fails as unroutable', async () => {
  const { exchange: ex } = await exchange({ bound: false });
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const answer = await pub.publish(
      target(`amqp://guest:guest@127.0.0.1/?exchange=${ex}&routing_key=k`),
      message(),
      5_000,
    );
    assert.deepEqual(answer, {
      kind: 'failed',
      error: `unroutable: no queue bound to exchange "${ex}" with routing key "k"`,
    });
    const queue = `herald-test-${RUN}-missing`;
    const direct = await pub.publish(
      target(`amqp://guest:guest@127.0.0.1/?routing_key=${queue}`),
      message(),
      5_000,
    );
    assert.deepEqual(direct, {
      kind: 'failed',
      error: `unroutable: no queue bound to the default exchange with routing key "${queue}"`,
    });
  } finally {
    await pub.close();
  }
});

test('the same event to two exchanges at once: only the unroutable one fails', async () => {
  const bound = await exchange();
  const unbound = await exchange({ bound: false });
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const to = (ex: string) => target(`amqp://guest:guest@127.0.0.1/?exchange=${ex}&routing_key=k`);
    for (let i = 0; i < 20; i++) {
      const m = message();
      const [ok, returned] = await Promise.all([
        pub.publish(to(bound.exchange), m, 5_000),
        pub.publish(to(unbound.exchange), m, 5_000),
      ]);
      assert.deepEqual(ok, { kind: 'ack', words: 'broker_ack' });
      assert.equal(returned.kind, 'failed');
    }
    assert.equal((await consume(bound.queue, 20)).length, 20);
  } finally {
    await pub.close();
  }
});

test('an exchange that does not exist fails its attempt only, not those to other exchanges', async () => {
  const { exchange: good, queue } = await exchange();
  const missing = `herald-test-${RUN}-absent`;
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const goodTarget = target(`amqp://guest:guest@127.0.0.1/?exchange=${good}&routing_key=k`);
    const badTarget = target(`amqp://guest:guest@127.0.0.1/?exchange=${missing}&routing_key=k`);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pub.publish(i % 2 ? badTarget : goodTarget, message(), 5_000)),
    );
    for (const [i, answer] of answers.entries()) {
      if (i % 2) assert.deepEqual(answer, { kind: 'failed', error: `no exchange "${missing}" in vhost "/"` });
      else assert.deepEqual(answer, { kind: 'ack', words: 'broker_ack' });
    }
    assert.equal((await consume(queue, 10)).length, 10);
  } finally {
    await pub.close();
  }
});

test('a full queue that rejects new messages: the nack fails the attempt', async () => {
  const { exchange: ex } = await exchange({
    queueArgs: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
  });
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const t = target(`amqp://guest:guest@127.0.0.1/?exchange=${ex}&routing_key=k`);
    assert.equal((await pub.publish(t, message(), 5_000)).kind, 'ack');
    const answer = await pub.publish(t, message(), 5_000);
    assert.equal(answer.kind, 'failed');
    assert.match((answer as { error: string }).error, /^nack: the broker refused the message/);
  } finally {
    await pub.close();
  }
});

test('a wrong password fails within the timeout, says so, and never shows the password', async () => {
  const pub = new AmqpPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF } });
  try {
    const t = target('amqp://guest:Wr0ng-S3cret@127.0.0.1/?exchange=amq.direct&routing_key=k');
    const started = performance.now();
    const answer = await pub.publish(t, message(), 3_000);
    assert.ok(performance.now() - started < 3_000);
    assert.deepEqual(answer, { kind: 'failed', error: 'authentication failed for user "guest"' });
    // Straight after, the address backs off: the next attempt fails at once with the same reason.
    const again = await pub.publish(t, message(), 3_000);
    assert.match(
      (again as { error: string }).error,
      /^authentication failed for user "guest"( \(next connection attempt in \d+ ms\))?$/,
    );
    assert.equal(pub.connections.size, 0);
  } finally {
    await pub.close();
  }
});

test('nothing listening: connection refused, named by address', async () => {
  const port = await freePort();
  const pub = new AmqpPublisher(LOOPBACK);
  try {
    const answer = await pub.publish(target(`amqp://u:p4ss@127.0.0.1:${port}/?exchange=x`), message(), 3_000);
    assert.deepEqual(answer, { kind: 'failed', error: `connection refused by 127.0.0.1:${port}` });
  } finally {
    await pub.close();
  }
});

test('many publishes share one connection per address; an idle one is closed and reopened on demand', async () => {
  const a = await exchange();
  const b = await exchange();
  const pub = new AmqpPublisher({ ...LOOPBACK, pool: { idleMs: 300 } });
  try {
    const ta = target(`amqp://guest:guest@127.0.0.1/?exchange=${a.exchange}&routing_key=k`);
    const tb = target(`amqp://guest:guest@127.0.0.1:5672/%2F?exchange=${b.exchange}&routing_key=k`);
    await oneConnectionPerAddress(pub, ta, tb);
    assert.equal((await consume(a.queue, 51)).length, 51);
  } finally {
    await pub.close();
  }
});

test('connections cut mid-stream: every attempt answers in time, every ack is in the queue, and it recovers', async () => {
  const { exchange: ex, queue } = await exchange();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5672 });
  const pub = new AmqpPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`amqp://guest:guest@127.0.0.1:${proxy.port}/?exchange=${ex}&routing_key=k`);
    const run = await publishThroughCuts((m) => pub.publish(t, m, TIMEOUT), proxy);
    const inQueue = (await consume(queue, run.acked.length)).map((m) => m.messageId as string);
    for (const id of run.acked)
      assert.ok(inQueue.includes(id), `${id} was acknowledged but is not in the queue`);
    for (const e of run.errors) assert.doesNotMatch(e, /guest/, 'no password in an error');
    console.log(`amqp: ${run.summary}; ${inQueue.length - new Set(inQueue).size} stored twice`);
  } finally {
    await pub.close();
    await proxy.close();
  }
});

test('the broker away for a few seconds: attempts fail fast meanwhile, then succeed again', async () => {
  const { exchange: ex, queue } = await exchange();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5672 });
  const pub = new AmqpPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`amqp://guest:guest@127.0.0.1:${proxy.port}/?exchange=${ex}&routing_key=k`);
    assert.equal((await pub.publish(t, message(), 3_000)).kind, 'ack');
    await proxy.refuse();
    const away = await failingFastWhileAway((m, ms) => pub.publish(t, m, ms));
    for (const e of away)
      assert.match(e, /^(connection down: )?connection (reset|refused) by 127\.0\.0\.1:\d+/);
    await proxy.accept();
    const backAt = performance.now();
    const m = message();
    await eventually(
      async () => ((await pub.publish(t, m, 3_000)).kind === 'ack' ? true : undefined),
      5_000,
      'recovery',
    );
    console.log(
      `amqp: back ${Math.round(performance.now() - backAt)} ms after the broker was reachable again`,
    );
    assert.ok((await consume(queue, 2)).some((got) => got.messageId === m.event_id));
    assert.equal(pub.connections.opened, 1, 'the client reconnected the same connection');
  } finally {
    await pub.close();
    await proxy.close();
  }
});
