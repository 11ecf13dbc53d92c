/**
 * createBrokerPublisher (src/net/brokers/index.ts): one publisher for the three kinds, each target sent to the
 * broker its scheme names, and close() closing every connection it opened.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import { type BrokerTarget, isBrokerUrlProblem, parseBrokerUrl } from '../../../src/domain/broker-url.ts';
import { createBrokerPublisher } from '../../../src/net/brokers/index.ts';
import { LOOPBACK, message, suffix } from './support.ts';

function target(raw: string): BrokerTarget {
  const t = parseBrokerUrl(raw);
  if (isBrokerUrlProblem(t)) assert.fail(t.message);
  return t;
}

test('routes each scheme to its broker; close() closes every connection', async () => {
  const run = suffix();
  const queue = `herald-test-${run}`;
  const streamName = `HERALD_TEST_${run.toUpperCase()}`;
  const key = `herald-test:${run}`;
  const rabbit = new Connection({ hostname: '127.0.0.1', port: 5672, username: 'guest', password: 'guest' });
  rabbit.on('error', () => {});
  const nc = await connect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  const redis = createClient({ socket: { host: '127.0.0.1', port: 6379 }, RESP: 2 });
  redis.on('error', () => {});
  await redis.connect();
  const brokers = createBrokerPublisher({ ...LOOPBACK, idleMs: 60_000 });
  try {
    await rabbit.queueDeclare({ queue });
    await jsm.streams.add({ name: streamName, subjects: [`herald.${run}.>`] });
    const answers = await Promise.all([
      brokers.publish(target(`amqp://guest:guest@127.0.0.1/?routing_key=${queue}`), message(), 5_000),
      brokers.publish(target(`nats://127.0.0.1/herald.${run}.x`), message(), 5_000),
      brokers.publish(target(`redis://127.0.0.1/0?stream=${key}`), message(), 5_000),
    ]);
    assert.deepEqual(answers[0], { ok: true, answer: 'broker_ack' });
    assert.deepEqual(answers[1], { ok: true, answer: `broker_ack stream=${streamName} seq=1` });
    assert.match(answers[2].ok ? answers[2].answer : answers[2].error, /^broker_ack \d+-\d+$/);
    assert.equal((await rabbit.queueDeclare({ queue, passive: true })).messageCount, 1);
    assert.equal((await jsm.streams.info(streamName)).state.messages, 1);
    assert.equal(await redis.xLen(key), 1);
    assert.deepEqual(
      [brokers.amqp.connections.size, brokers.nats.connections.size, brokers.redis.connections.size],
      [1, 1, 1],
    );
    await brokers.close();
    assert.deepEqual(
      [brokers.amqp.connections.size, brokers.nats.connections.size, brokers.redis.connections.size],
      [0, 0, 0],
    );
    assert.deepEqual(await brokers.publish(target(`redis://127.0.0.1/0?stream=${key}`), message(), 1_000), {
      ok: false,
      error: 'the publisher is closed',
    });
  } finally {
    await brokers.close();
    await rabbit.queueDelete({ queue }).catch(() => {});
    await jsm.streams.delete(streamName).catch(() => {});
    await redis.del(key);
    redis.destroy();
    await nc.close();
    await rabbit.close();
  }
});
