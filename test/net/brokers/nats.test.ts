/**
 * The NATS JetStream publisher (src/net/brokers/nats.ts) against the machine's nats-server (127.0.0.1:4222, with
 * JetStream), and private servers of the test's own where a password or a real restart is needed: what a
 * JetStream consumer reads, what a failed attempt says, one connection per address, the idle close, and cuts,
 * absences and a crash of the server. Streams are named per run and deleted afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { isBrokerUrlProblem, type NatsTarget, parseBrokerUrl } from '../../../src/domain/broker-url.ts';
import { NatsPublisher } from '../../../src/net/brokers/nats.ts';
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

const RUN = suffix().toUpperCase();
const BACKOFF = { firstMs: 50, maxMs: 500 };
let nc: NatsConnection;
let jsm: JetStreamManager;
const streams: string[] = [];

function target(raw: string): NatsTarget {
  const t = parseBrokerUrl(raw);
  assert.ok(!isBrokerUrlProblem(t) && t.kind === 'nats', raw);
  return t as NatsTarget;
}

/** A stream of its own, covering `herald.<run>.<name>.>`; returns the subject prefix. */
async function stream(
  config: Record<string, unknown> = {},
  manager = jsm,
): Promise<{ name: string; subjects: string }> {
  const name = `HERALD_TEST_${RUN}_${suffix().toUpperCase()}`;
  const subjects = `herald.${RUN}.${name}`;
  await manager.streams.add({ name, subjects: [`${subjects}.>`], ...config });
  if (manager === jsm) streams.push(name);
  return { name, subjects };
}

/** The stream's messages as a JetStream consumer reads them. */
async function read(name: string, count: number, conn = nc) {
  const consumer = await jetstream(conn).consumers.get(name);
  const got: { id: string | undefined; headers: Record<string, string>; body: string; subject: string }[] =
    [];
  while (got.length < count) {
    const batch = await consumer.fetch({ max_messages: count - got.length, expires: 2_000 });
    let n = 0;
    for await (const m of batch) {
      n++;
      const headers: Record<string, string> = {};
      for (const [k, v] of m.headers ?? []) headers[k] = v.join(',');
      got.push({ id: m.headers?.get('Nats-Msg-Id'), headers, body: m.string(), subject: m.subject });
    }
    if (n === 0) break;
  }
  return got;
}

before(async () => {
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
});

after(async () => {
  for (const name of streams) await jsm.streams.delete(name).catch(() => {});
  await nc.close();
});

test('delivers the exact body with its headers and Nats-Msg-Id = event id; the stream acknowledges it', async () => {
  const s = await stream();
  const pub = new NatsPublisher(LOOPBACK);
  try {
    const m = message({ body: '{"a": 1,\n  "text": "héllo"}' });
    const answer = await pub.publish(target(`nats://127.0.0.1/${s.subjects}.created`), m, 5_000);
    assert.deepEqual(answer, { kind: 'ack', words: `broker_ack stream=${s.name} seq=1` });
    const [got] = await read(s.name, 1);
    assert.equal(got.body, m.body);
    assert.equal(got.subject, `${s.subjects}.created`);
    assert.equal(got.id, m.event_id);
    assert.deepEqual(got.headers, { ...m.headers, 'Nats-Msg-Id': m.event_id });
  } finally {
    await pub.close();
  }
});

test('the same event published again is stored once (the stream answers duplicate)', async () => {
  const s = await stream();
  const pub = new NatsPublisher(LOOPBACK);
  try {
    const t = target(`nats://127.0.0.1/${s.subjects}.x`);
    const m = message();
    assert.deepEqual(await pub.publish(t, m, 5_000), {
      kind: 'ack',
      words: `broker_ack stream=${s.name} seq=1`,
    });
    assert.deepEqual(await pub.publish(t, m, 5_000), {
      kind: 'ack',
      words: `broker_ack stream=${s.name} seq=1 duplicate`,
    });
    assert.equal((await jsm.streams.info(s.name)).state.messages, 1);
  } finally {
    await pub.close();
  }
});

test('a subject no stream covers fails at once', async () => {
  const pub = new NatsPublisher(LOOPBACK);
  try {
    const t = target(`nats://127.0.0.1/herald.${RUN}.nostream`);
    await pub.publish(t, message(), 5_000); // the connection is open from here on
    const started = performance.now();
    const answer = await pub.publish(t, message(), 5_000);
    assert.ok(performance.now() - started < 500, 'well before the timeout');
    assert.deepEqual(answer, { kind: 'failed', error: `no stream for subject "herald.${RUN}.nostream"` });
  } finally {
    await pub.close();
  }
});

test('a full stream that discards new messages refuses the attempt', async () => {
  const s = await stream({ max_msgs: 1, discard: 'new' });
  const pub = new NatsPublisher(LOOPBACK);
  try {
    const t = target(`nats://127.0.0.1/${s.subjects}.x`);
    assert.equal((await pub.publish(t, message(), 5_000)).kind, 'ack');
    assert.deepEqual(await pub.publish(t, message(), 5_000), {
      kind: 'failed',
      error: 'stream full: maximum messages exceeded',
    });
  } finally {
    await pub.close();
  }
});

test('a wrong password fails within the timeout, says so, and never shows the password', async () => {
  const server = await PrivateServer.nats(['--user', 'herald', '--pass', 'R1ght-S3cret']);
  const pub = new NatsPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF } });
  try {
    const started = performance.now();
    const answer = await pub.publish(
      target(`nats://herald:Wr0ng-S3cret@127.0.0.1:${server.port}/a.b`),
      message(),
      3_000,
    );
    assert.ok(performance.now() - started < 3_000);
    assert.deepEqual(answer, { kind: 'failed', error: 'authentication failed for user "herald"' });
    // The right one works (and the stream is missing there: refused quickly, not as a timeout).
    const right = await pub.publish(
      target(`nats://herald:R1ght-S3cret@127.0.0.1:${server.port}/a.b`),
      message(),
      3_000,
    );
    assert.deepEqual(right, { kind: 'failed', error: 'no stream for subject "a.b"' });
  } finally {
    await pub.close();
    await server.stop();
  }
});

test('nothing listening: connection refused, named by address', async () => {
  const port = await freePort();
  const pub = new NatsPublisher(LOOPBACK);
  try {
    const answer = await pub.publish(target(`nats://u:p4ss@127.0.0.1:${port}/a.b`), message(), 3_000);
    assert.deepEqual(answer, { kind: 'failed', error: `connection refused by 127.0.0.1:${port}` });
  } finally {
    await pub.close();
  }
});

test('many publishes share one connection per address; an idle one is closed and reopened on demand', async () => {
  const s = await stream();
  const pub = new NatsPublisher({ ...LOOPBACK, pool: { idleMs: 300 } });
  try {
    const a = target(`nats://127.0.0.1/${s.subjects}.a`);
    const b = target(`nats://127.0.0.1:4222/${s.subjects}.b`);
    await oneConnectionPerAddress(pub, a, b);
    assert.equal((await jsm.streams.info(s.name)).state.messages, 101);
  } finally {
    await pub.close();
  }
});

test('connections cut mid-stream: every attempt answers in time, every ack is in the stream, and it recovers', async () => {
  const s = await stream();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 4222 });
  const pub = new NatsPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`nats://127.0.0.1:${proxy.port}/${s.subjects}.x`);
    const run = await publishThroughCuts((m) => pub.publish(t, m, TIMEOUT), proxy);
    const stored = await read(s.name, 500);
    const ids = new Set(stored.map((m) => m.id));
    for (const id of run.acked) assert.ok(ids.has(id), `${id} was acknowledged but is not in the stream`);
    assert.equal(stored.length, 500, 'Nats-Msg-Id kept retried attempts from being stored twice');
    console.log(`nats: ${run.summary}`);
  } finally {
    await pub.close();
    await proxy.close();
  }
});

test('a cut right after a reconnect: back after one backoff step, not at its cap', async () => {
  // The client asks for the delay at every pass of its reconnect loop, waiting passes too: counting those as
  // attempts had it wait the cap (10 s by default) after two quick cuts.
  const s = await stream();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 4222 });
  const pub = new NatsPublisher({
    ...LOOPBACK,
    pool: { backoff: { firstMs: 250, maxMs: 10_000 } },
    connectTimeoutMs: 2_000,
  });
  try {
    const t = target(`nats://127.0.0.1:${proxy.port}/${s.subjects}.x`);
    assert.equal((await pub.publish(t, message(), 3_000)).kind, 'ack');
    for (let cut = 0; cut < 3; cut++) {
      proxy.cut();
      await eventually(() => (proxy.connections > 0 ? true : undefined), 5_000, 'the client back');
    }
    proxy.cut();
    const from = performance.now();
    await eventually(
      async () => ((await pub.publish(t, message(), 1_000)).kind === 'ack' ? true : undefined),
      5_000,
      'a publish acknowledged again',
    );
    const backMs = performance.now() - from;
    assert.ok(backMs < 2_500, `back after ${Math.round(backMs)} ms`);
  } finally {
    await pub.close();
    await proxy.close();
  }
});

test('the server away for a few seconds: attempts fail meanwhile, then succeed again', async () => {
  const s = await stream();
  const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 4222 });
  const pub = new NatsPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const t = target(`nats://127.0.0.1:${proxy.port}/${s.subjects}.x`);
    assert.equal((await pub.publish(t, message(), 3_000)).kind, 'ack');
    await proxy.refuse();
    const away = await failingFastWhileAway((m, ms) => pub.publish(t, m, ms));
    for (const e of away)
      assert.match(
        e,
        /^connection down: the connection was lost; reconnecting$|^connection lost before the stream acknowledged$/,
      );
    await proxy.accept();
    const backAt = performance.now();
    await eventually(
      async () => ((await pub.publish(t, message(), 3_000)).kind === 'ack' ? true : undefined),
      5_000,
      'recovery',
    );
    console.log(
      `nats: back ${Math.round(performance.now() - backAt)} ms after the server was reachable again`,
    );
    assert.equal(pub.connections.opened, 1, 'the client reconnected the same connection');
  } finally {
    await pub.close();
    await proxy.close();
  }
});

test('the server killed and restarted mid-stream loses nothing it acknowledged', async () => {
  const server = await PrivateServer.nats();
  const own = await connect({
    servers: `127.0.0.1:${server.port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
  const pub = new NatsPublisher({ ...LOOPBACK, pool: { backoff: BACKOFF }, connectTimeoutMs: 2_000 });
  try {
    const s = await stream({ storage: 'file' }, await jetstreamManager(own));
    const t = target(`nats://127.0.0.1:${server.port}/${s.subjects}.x`);
    const acked: string[] = [];
    const failures = new Set<string>();
    let restarted = false;
    const started = performance.now();
    for (let i = 0; acked.length < 300; i++) {
      if (i === 100) {
        await server.kill('SIGKILL'); // a crash: what was in flight unacknowledged is the caller's to retry
        setTimeout(() => void server.restart().then(() => (restarted = true)), 1_000);
      }
      const m = message();
      const t0 = performance.now();
      const answer = await pub.publish(t, m, 1_000);
      assert.ok(performance.now() - t0 < 1_250);
      if (answer.kind === 'ack') acked.push(m.event_id);
      else {
        failures.add(answer.error.replace(/\d+/g, 'N'));
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(performance.now() - started < 30_000, 'recovered after the restart');
    }
    assert.ok(restarted && failures.size > 0);
    const ids = new Set((await read(s.name, acked.length, own)).map((m) => m.id));
    for (const id of acked) assert.ok(ids.has(id), `${id} was acknowledged but is not in the stream`);
    console.log(
      `nats restart: 300 acknowledged in ${Math.round(performance.now() - started)} ms; failures: ${[...failures].join(' | ')}`,
    );
  } finally {
    await pub.close();
    await own.close();
    await server.stop();
  }
});
