/**
 * The Redis Streams publisher (src/net/brokers/redis.ts) against the machine's Redis (127.0.0.1:6379), and private
 * servers of the test's own where a password is needed: what XRANGE reads back, MAXLEN ~ trimming, what a failed
 * attempt says, one connection per address, the idle close, a server that never answers, and cuts and absences
 * through a TCP proxy. Stream keys are named per run and deleted afterwards.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { createClient } from '@redis/client';
import { isBrokerUrlProblem, parseBrokerUrl, type RedisTarget } from '../../../src/domain/broker-url.ts';
import { RedisPublisher } from '../../../src/net/brokers/redis.ts';
import { TcpProxy } from '../../support/tcp-proxy.ts';
import {
  eventually,
  failingFastWhileAway,
  freePort,
  LOOPBACK,
  message,
  oneConnectionPerAddress,
  PrivateServer,
  publishThroughCuts,
  suffix,
  TIMEOUT,
} from './support.ts';

const RUN = suffix();
const BACKOFF = { firstMs: 50, maxMs: 500 };
const keys: [number, string][] = [];
const clients = new Map<number, ReturnType<typeof createClient>>();

function target(raw: string): RedisTarget {
  const t = parseBrokerUrl(raw);
  assert.ok(!isBrokerUrlProblem(t) && t.kind === 'redis', raw);
  return t as RedisTarget;
}

function stream(db = 0): string {
  const key = `herald-test:${RUN}:${suffix()}`;
  keys.push([db, key]);
  return key;
}

async function redis(db = 0) {
  let client = clients.get(db);
  if (!client) {
    client = createClient({ socket: { host: '127.0.0.1', port: 6379 }, database: db, RESP: 2 });
    client.on('error', () => {});
    await client.connect();
    clients.set(db, client);
  }
  return client;
}

const xrange = async (key: string, db = 0) =>
  (await (await redis(db)).xRange(key, '-', '+')) as unknown as {
    id: string;
    message: Record<string, string>;
  }[];

before(async () => {
  await redis(0);
});

after(async () => {
  for (const [db, key] of keys) await (await redis(db)).del(key);
  for (const client of clients.values()) client.destroy();
});

test('XADD with the event id, kind, timestamp, signature and the exact body; the answer is the entry id', async () => {
  const key = stream();
  const pub = new RedisPublisher(LOOPBACK);
  try {
    const m = message({ body: '{"a": 1,\n  "text": "héllo"}' });
    const answer = await pub.publish(
      target(`redis://127.0.0.1/0?stream=${encodeURIComponent(key)}`),
      m,
      5_000,
    );
    const [entry] = await xrange(key);
    assert.deepEqual(answer, { kind: 'ack', words: `broker_ack ${entry.id}` });
    assert.deepEqual(entry.message, {
      event_id: m.event_id,
      event: m.event,
      timestamp: m.timestamp,
      signature: m.signature,
      body: m.body,
    });
    assert.deepEqual(Object.keys(entry.message), ['event_id', 'event', 'timestamp', 'signature', 'body']);
    // Unsigned: no signature field at all.
    const unsigned = message({ signature: null });
    assert.equal((await pub.publish(target(`redis://127.0.0.1?stream=${key}`), unsigned, 5_000)).kind, 'ack');
    assert.deepEqual(Object.keys((await xrange(key))[1].message), ['event_id', 'event', 'timestamp', 'body']);
  } finally {
    await pub.close();
  }
});

test('the database in the path is the one written to', async () => {
  const key = stream(1);
  const pub = new RedisPublisher(LOOPBACK);
  try {
    assert.equal(
      (await pub.publish(target(`redis://127.0.0.1/1?stream=${key}`), message(), 5_000)).kind,
      'ack',
    );
    assert.equal(await (await redis(1)).xLen(key), 1);
    assert.equal(await (await redis(0)).exists(key), 0);
  } finally {
    await pub.close();
  }
});

test('maxlen trims the stream, approximately (MAXLEN ~)', async () => {
  const key = stream();
  const pub = new RedisPublisher(LOOPBACK);
  try {
    const t = target(`redis://127.0.0.1/0?stream=${key}&maxlen=100`);
    const sent = Array.from({ length: 1000 }, () => message());
    for (const m of sent) assert.equal((await pub.publish(t, m, 5_000)).kind, 'ack');
    const kept = (await xrange(key)).map((e) => e.message.event_id);
    assert.ok(kept.length >= 100 && kept.length < 300, `about 100 entries kept, got ${kept.length}`);
    // The oldest went: what is left is the newest, in order.
    assert.deepEqual(
      kept,
      sent.slice(-kept.length).map((m) => m.event_id),
    );
  } finally {
    await pub.close();
  }
});

test('a key that is not a stream fails the attempt, saying so', async () => {
  const key = stream();
  await (await redis()).set(key, 'a string');
  const pub = new RedisPublisher(LOOPBACK);
  try {
    assert.deepEqual(await pub.publish(target(`redis://127.0.0.1/0?stream=${key}`), message(), 5_000), {
      kind: 'failed',
      error: `the key "${key}" holds something other than a stream`,
    });
  } finally {
    await pub.close();
  }
});

test('a wrong or missing password fails within the timeout, says so, and never shows the password', async () => {
  const server = await PrivateServer.redis(['--requirepass', 'R1ght-S3cret']);
  const pub = new RedisPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF } });
  try {
    const started = performance.now();
    const wrong = await pub.publish(
      target(`redis://:Wr0ng-S3cret@127.0.0.1:${server.port}/0?stream=s`),
      message(),
      3_000,
    );
    assert.ok(performance.now() - started < 3_000);
    assert.deepEqual(wrong, { kind: 'failed', error: 'authentication failed' });
    const none = await pub.publish(target(`redis://127.0.0.1:${server.port}/0?stream=s`), message(), 3_000);
    assert.deepEqual(none, { kind: 'failed', error: 'authentication failed: the server needs a password' });
    const right = await pub.publish(
      target(`redis://:R1ght-S3cret@127.0.0.1:${server.port}/0?stream=s`),
      message(),
      3_000,
    );
    assert.equal(right.kind, 'ack');
    assert.equal(pub.connections.size, 1, 'the refused ones left no connection behind');
  } finally {
    await pub.close();
    await server.stop();
  }
});

test('nothing listening: connection refused, named by address', async () => {
  const port = await freePort();
  const pub = new RedisPublisher(LOOPBACK);
  try {
    const answer = await pub.publish(target(`redis://:p4ss@127.0.0.1:${port}/0?stream=s`), message(), 3_000);
    assert.deepEqual(answer, { kind: 'failed', error: `connection refused by 127.0.0.1:${port}` });
  } finally {
    await pub.close();
  }
});

test('a server that accepts and never answers: the attempt ends at its timeout, the connection at the connect timeout', async () => {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => sockets.add(s));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  const { port } = silent.address() as { port: number };
  const pub = new RedisPublisher({
    ...LOOPBACK,
    connectTimeoutMs: 800,
    pool: { backoff: { firstMs: 10_000, maxMs: 10_000 } },
  });
  try {
    const t = target(`redis://:p4ss@127.0.0.1:${port}/0?stream=s`);
    const started = performance.now();
    const answer = await pub.publish(t, message(), 500);
    assert.ok(performance.now() - started < 700);
    assert.deepEqual(answer, { kind: 'failed', error: 'timeout: no answer from Redis within 500 ms' });
    await eventually(() => (pub.connections.size === 0 ? true : undefined), 3_000, 'the open to give up');
    // Then the address backs off: the next attempt fails at once, saying why.
    const next = await pub.publish(t, message(), 500);
    assert.match(
      next.kind === 'ack' ? '' : next.error,
      /^connection to 127\.0\.0\.1:\d+ timed out \(no answer within 800 ms\) \(next connection attempt in \d+ ms\)$/,
    );
  } finally {
    await pub.close();
    for (const s of sockets) s.destroy();
    silent.close();
  }
});

test('many publishes share one connection per address; an idle one is closed and reopened on demand', async () => {
  const a = stream();
  const b = stream();
  const pub = new RedisPublisher({ ...LOOPBACK, pool: { idleMs: 300 } });
  try {
    const ta = target(`redis://127.0.0.1/0?stream=${a}`);
    const tb = target(`redis://127.0.0.1:6379?stream=${b}&maxlen=1000`);
    await oneConnectionPerAddress(pub, ta, tb);
    assert.equal(await (await redis()).xLen(a), 51);
  } finally {
    await pub.close();
  }
});

test('connections cut mid-stream: every attempt answers in time, every reply is in the stream, and it recovers', async () => {
  const key = stream();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 6379 });
  const pub = new RedisPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`redis://127.0.0.1:${proxy.port}/0?stream=${key}`);
    const run = await publishThroughCuts((m) => pub.publish(t, m, TIMEOUT), proxy);
    const stored = (await xrange(key)).map((e) => e.message.event_id);
    const ids = new Set(stored);
    for (const id of run.acked) assert.ok(ids.has(id), `${id} was answered but is not in the stream`);
    console.log(`redis: ${run.summary}; ${stored.length - ids.size} stored twice`);
  } finally {
    await pub.close();
    await proxy.close();
  }
});

test('the server away for a few seconds: attempts fail fast meanwhile, then succeed again', async () => {
  const key = stream();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 6379 });
  const pub = new RedisPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`redis://127.0.0.1:${proxy.port}/0?stream=${key}`);
    assert.equal((await pub.publish(t, message(), 3_000)).kind, 'ack');
    await proxy.refuse();
    const away = await failingFastWhileAway((m, ms) => pub.publish(t, m, ms));
    for (const e of away)
      assert.match(e, /^connection down: .*; reconnecting$|^connection (reset|refused) by 127\.0\.0\.1:\d+$/);
    assert.ok(
      [...away].some((e) => e.includes(`connection refused by 127.0.0.1:${proxy.port}`)),
      [...away].join(' | '),
    );
    await proxy.accept();
    const backAt = performance.now();
    const m = message();
    await eventually(
      async () => ((await pub.publish(t, m, 3_000)).kind === 'ack' ? true : undefined),
      5_000,
      'recovery',
    );
    console.log(
      `redis: back ${Math.round(performance.now() - backAt)} ms after the server was reachable again`,
    );
    assert.equal((await xrange(key)).at(-1)?.message.event_id, m.event_id);
    assert.equal(pub.connections.opened, 1, 'the client reconnected the same connection');
  } finally {
    await pub.close();
    await proxy.close();
  }
});
