/**
 * The registry of destinations (src/net/destinations/registry.ts): one provider per broker kind, each attempt sent
 * to the broker its scheme names, acknowledged in the broker's words, and close() closing every connection opened.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { Connection } from 'rabbitmq-client';
import type { Sending } from '../../../src/net/destinations/provider.ts';
import { Destinations } from '../../../src/net/destinations/registry.ts';
import { LOOPBACK, message, suffix } from '../brokers/support.ts';

/** An attempt to `url`, as the delivery thread makes one (no secret: unsigned). */
function sending(url: string): Sending {
  const m = message();
  return {
    destination_url: url,
    event_id: m.event_id,
    body: m.body,
    timestamp: m.timestamp,
    secrets: [],
    headers: null,
    standard: false,
  };
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
  const registry = new Destinations({ ...LOOPBACK, timeoutMs: 5_000, userAgent: 'Herald/test' });
  const { amqp, nats, redis: redisProvider } = registry.providers;
  const connections = () => [amqp, nats, redisProvider].map((p) => p.publisher.connections.size);
  try {
    await rabbit.queueDeclare({ queue });
    await jsm.streams.add({ name: streamName, subjects: [`herald.${run}.>`] });
    const answers = await Promise.all([
      registry.attempt(sending(`amqp://guest:guest@127.0.0.1/?routing_key=${queue}`)),
      registry.attempt(sending(`nats://127.0.0.1/herald.${run}.x`)),
      registry.attempt(sending(`redis://127.0.0.1/0?stream=${key}`)),
    ]);
    const said = answers.map((a) => [a.acknowledged, a.status_code, a.error ?? a.response_body]);
    assert.deepEqual(said[0], [true, null, 'broker_ack']);
    assert.deepEqual(said[1], [true, null, `broker_ack stream=${streamName} seq=1`]);
    assert.equal(said[2][0], true);
    assert.match(String(said[2][2]), /^broker_ack \d+-\d+$/);
    assert.equal((await rabbit.queueDeclare({ queue, passive: true })).messageCount, 1);
    assert.equal((await jsm.streams.info(streamName)).state.messages, 1);
    assert.equal(await redis.xLen(key), 1);
    assert.deepEqual(connections(), [1, 1, 1]);
    await registry.close();
    assert.deepEqual(connections(), [0, 0, 0]);
    const closed = await registry.attempt(sending(`redis://127.0.0.1/0?stream=${key}`));
    assert.deepEqual([closed.acknowledged, closed.error], [undefined, 'the publisher is closed']);
  } finally {
    await registry.close();
    await rabbit.queueDelete({ queue }).catch(() => {});
    await jsm.streams.delete(streamName).catch(() => {});
    await redis.del(key);
    redis.destroy();
    await nc.close();
    await rabbit.close();
  }
});
