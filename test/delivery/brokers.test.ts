/**
 * Destinations beyond HTTP, end to end: a webhook whose destination_url is a RabbitMQ exchange, a NATS JetStream
 * subject or a Redis stream, on the machine's real brokers. Each delivers the exact body with Herald's signed headers
 * (the receiver kit verifies them), counts an attempt delivered only on the broker's proof (its words in the log),
 * retries a refusal with its reason, never shows or keeps the password in the clear, and refuses a bad URL naming
 * its part. Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createClient } from '@redis/client';
import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { verify } from '../../packages/receiver/src/index.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';

const SECRET = 'broker-secret-0123456789';
const RUN = randomBytes(4).toString('hex');
let h: TestHerald;
let rabbit: Connection;
let nats: NatsConnection;
let redis: ReturnType<typeof createClient>;
const cleanup: (() => Promise<unknown>)[] = [];

before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2', DELIVERY_TIMEOUT_MS: '3000' });
  rabbit = new Connection({ hostname: '127.0.0.1', port: 5672, username: 'guest', password: 'guest' });
  rabbit.on('error', () => {});
  await rabbit.onConnect(5_000);
  nats = await connect({ servers: '127.0.0.1:4222' });
  redis = createClient({ socket: { host: '127.0.0.1', port: 6379 } });
  await redis.connect();
});
after(async () => {
  await h.close();
  for (const c of cleanup) await c().catch(() => {});
  await Promise.all([rabbit.close(), nats.close(), redis.quit()]);
});

async function webhook(destination_url: string) {
  const ins = await h.createInstance();
  const id = await h.createWebhook(ins, {
    destination_url,
    events: ['message'],
    client_sign_secret: SECRET,
    headers: { 'X-Tenant': 'acme' },
  });
  return { ins, id };
}

async function publish(ins: string, n: number): Promise<string> {
  const r = await h.publish(ins, { event: 'message', payload: messagePayload({ body: `héllo #${n}` }) });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r.body.event_id;
}

/** The deliveries' last answers once none is pending. */
async function settledLog(ins: string) {
  return eventually(async () => {
    const r = await h.request('GET', `/instances/${ins}/deliveries`);
    return r.body.deliveries.some((d: any) => d.status === 'pending') ? undefined : r.body.deliveries;
  }, 20_000);
}

/** A message as a broker gave it back: its headers, its body's bytes. */
const verifies = (headers: Record<string, string>, body: Buffer) =>
  verify({ secret: SECRET, headers: Object.fromEntries(Object.entries(headers)), rawBody: body }).ok;

describe('broker destinations', () => {
  test('RabbitMQ: the exact body, persistent, message_id the event id, signed headers; broker_ack in the log', async () => {
    const queue = `herald-it-${RUN}-q`;
    await rabbit.queueDeclare({ queue, durable: true });
    cleanup.push(() => rabbit.queueDelete({ queue }));
    const { ins, id } = await webhook(`amqp://guest:guest@127.0.0.1:5672/%2F?exchange=&routing_key=${queue}`);
    const view = await h.request('GET', `/instances/${ins}/webhooks/${id}`);
    assert.equal(
      view.body.webhook.destination_url,
      `amqp://guest:****@127.0.0.1:5672/%2F?exchange=&routing_key=${queue}`,
    );
    const ids = [await publish(ins, 1), await publish(ins, 2)];
    const got: AsyncMessage[] = [];
    const consumer = rabbit.createConsumer({ queue, noAck: true, queueOptions: { durable: true } }, (m) => {
      got.push(m);
    });
    await eventually(async () => (got.length >= 2 ? true : undefined), 15_000);
    await consumer.close();
    for (const m of got) {
      const body = Buffer.isBuffer(m.body) ? m.body : Buffer.from(JSON.stringify(m.body));
      const headers = Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v)]));
      assert.ok(ids.includes(String(m.messageId)), 'message_id is the event id');
      assert.equal(headers['x-service-event-id'] ?? headers['X-Service-Event-Id'], m.messageId);
      assert.equal(headers['X-Tenant'] ?? headers['x-tenant'], 'acme');
      assert.equal(m.durable, true, 'persistent');
      assert.equal(m.contentType, 'application/json');
      if (Buffer.isBuffer(m.body))
        assert.equal(verifies(headers, body), true, 'the receiver kit verifies it');
    }
    const log = await settledLog(ins);
    assert.deepEqual(
      log.map((d: any) => d.status),
      ['delivered', 'delivered'],
    );
    const detail = await h.request('GET', `/instances/${ins}/deliveries/${log[0].delivery_id}`);
    assert.match(detail.body.delivery.attempts[0].response_body, /^broker_ack/);
  });

  test('RabbitMQ: an unroutable message is a failed attempt with its reason, retried, never delivered', async () => {
    const exchange = `herald-it-${RUN}-unbound`;
    await rabbit.exchangeDeclare({ exchange, type: 'direct' });
    cleanup.push(() => rabbit.exchangeDelete({ exchange }));
    const { ins } = await webhook(`amqp://guest:guest@127.0.0.1/?exchange=${exchange}&routing_key=nobody`);
    await publish(ins, 1);
    const [d] = await settledLog(ins);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempt_count, 6);
    assert.match(d.last_error, /unroutable/);
  });

  test('NATS JetStream: Nats-Msg-Id the event id, the exact bytes, signed headers', async () => {
    const jsm = await jetstreamManager(nats);
    const name = `HERALD_IT_${RUN.toUpperCase()}`;
    await jsm.streams.add({ name, subjects: [`herald.it.${RUN}.>`] });
    cleanup.push(() => jsm.streams.delete(name));
    const { ins } = await webhook(`nats://127.0.0.1:4222/herald.it.${RUN}.events`);
    const ids = [await publish(ins, 1), await publish(ins, 2)];
    await settledLog(ins);
    const consumer = await jetstream(nats).consumers.get(name);
    const batch = await consumer.fetch({ max_messages: 2, expires: 2_000 });
    const got: { id: string; headers: Record<string, string>; body: Uint8Array }[] = [];
    for await (const m of batch) {
      const headers: Record<string, string> = {};
      for (const [k, v] of m.headers ?? []) headers[k.toLowerCase()] = v.join(',');
      got.push({ id: m.headers?.get('Nats-Msg-Id') ?? '', headers, body: m.data });
    }
    assert.deepEqual(got.map((g) => g.id).sort(), [...ids].sort());
    for (const g of got) assert.equal(verifies(g.headers, Buffer.from(g.body)), true);
  });

  test('NATS: a subject no stream covers is a failed attempt that says so', async () => {
    const { ins } = await webhook(`nats://127.0.0.1:4222/herald.nowhere.${RUN}`);
    await publish(ins, 1);
    const [d] = await settledLog(ins);
    assert.equal(d.status, 'failed');
    assert.match(d.last_error, /no stream/);
  });

  test('Redis Streams: XADD with event_id, event, timestamp, signature and body; the entry id in the log', async () => {
    const stream = `herald:it:${RUN}`;
    cleanup.push(() => redis.del(stream));
    const { ins } = await webhook(
      `redis://127.0.0.1:6379/0?stream=${encodeURIComponent(stream)}&maxlen=1000`,
    );
    const ids = [await publish(ins, 1), await publish(ins, 2)];
    const log = await settledLog(ins);
    const entries = (await redis.xRange(stream, '-', '+')) as unknown as {
      id: string;
      message: Record<string, string>;
    }[];
    assert.deepEqual(entries.map((e) => e.message.event_id).sort(), [...ids].sort());
    for (const e of entries) {
      assert.equal(e.message.event, 'message');
      const headers = {
        'x-service-event-id': e.message.event_id,
        'x-service-timestamp': e.message.timestamp,
        'x-service-signature': e.message.signature,
      };
      assert.equal(verifies(headers, Buffer.from(e.message.body)), true);
    }
    const detail = await h.request('GET', `/instances/${ins}/deliveries/${log[0].delivery_id}`);
    assert.match(detail.body.delivery.attempts[0].response_body, /^broker_ack \d+-\d+$/);
  });

  test('a password is sealed: **** in the view, kept when given back so for the same server, refused for another', async () => {
    const ins = await h.createInstance();
    const url = 'amqp://guest:s3cret-pass@127.0.0.1/?exchange=x&routing_key=k';
    const created = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: url, events: ['message'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.webhook_id;
    const view = await h.request('GET', `/instances/${ins}/webhooks/${id}`);
    const shown = view.body.webhook.destination_url;
    assert.equal(shown, 'amqp://guest:****@127.0.0.1/?exchange=x&routing_key=k');
    const kept = await h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
      body: { destination_url: shown, events: ['message', 'message.ack'] },
    });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    const moved = await h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
      body: { destination_url: 'amqp://guest:****@127.0.0.1/?exchange=y&routing_key=k', events: ['message'] },
    });
    assert.equal(moved.status, 200, 'another exchange on the same server keeps the password');
    assert.equal(moved.body.webhook.destination_url, 'amqp://guest:****@127.0.0.1/?exchange=y&routing_key=k');
    const other = await h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
      body: { destination_url: 'amqp://guest:****@127.0.0.2/?exchange=y&routing_key=k', events: ['message'] },
    });
    assert.equal(other.status, 400, 'another host does not get the password');
    assert.equal(other.body.error.details[0].field, 'destination_url');
    assert.match(other.body.error.details[0].message, /same server and user/);
    assert.equal(
      JSON.stringify(await h.request('GET', `/instances/${ins}/webhooks`)).includes('s3cret'),
      false,
    );
  });

  test('a bad broker URL is a 400 naming the part that is wrong', async () => {
    const ins = await h.createInstance();
    const cases: [string, RegExp][] = [
      ['kafka://127.0.0.1/topic', /unknown scheme/],
      ['redis://127.0.0.1/0', /stream/],
      ['redis://127.0.0.1/0?stream=s&maxlen=-3', /maxlen/],
      [`amqp://127.0.0.1/?exchange=${'e'.repeat(256)}&routing_key=k`, /exchange/],
    ];
    for (const [url, rule] of cases) {
      const r = await h.request('POST', `/instances/${ins}/webhooks`, {
        body: { destination_url: url, events: ['message'] },
      });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.error.details[0].field, 'destination_url', url);
      assert.match(r.body.error.details[0].message, rule, url);
    }
  });
});
