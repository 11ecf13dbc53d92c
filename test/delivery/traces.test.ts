/**
 * OpenTelemetry traces, end to end, with a test collector taking OTLP over HTTP: a publish continues the publisher's
 * traceparent in a SERVER span; each attempt is a `herald.attempt` span in that trace, a retry after a restart of
 * Herald included (the trace context is stored with the event); each attempt carries a traceparent naming its own
 * span, to an HTTP receiver and to the real brokers; the default protocol is protobuf; and with tracing off nothing
 * is sent and no attempt carries a traceparent. Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jetstream } from '@nats-io/jetstream';
import pino from 'pino';
import type { AsyncMessage } from 'rabbitmq-client';
import { verify } from '../../packages/receiver/src/index.ts';
import { pngImage } from '../media/files.ts';
import { BrokerClients } from '../support/broker-consumers.ts';
import { instanceWithWebhook } from '../support/child-rig.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import {
  apiRequest,
  eventually,
  messagePayload,
  startTestHerald,
  type TestHerald,
} from '../support/herald.ts';
import {
  attemptsOf,
  type CollectedSpan,
  hex,
  publisherTrace,
  SPAN_KIND,
  TestCollector,
  TRACEPARENT,
  tracingEnv,
} from '../support/otlp-collector.ts';
import { TestReceiver } from '../support/receiver.ts';
import { spawnHerald } from '../support/spawn.ts';

const SECRET = 'trace-secret-0123456789';

/** A new instance with one webhook to `url`, and an event published to it with a publisher's traceparent. */
async function publishTraced(h: TestHerald, url: string, webhook: Record<string, unknown> = {}) {
  const ins = await h.createInstance();
  await h.createWebhook(ins, { destination_url: url, events: ['message'], ...webhook });
  const publisher = publisherTrace();
  const r = await h.request('POST', `/instances/${ins}/events`, {
    body: { event: 'message', payload: messagePayload() },
    headers: { traceparent: publisher.traceparent },
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return { ...publisher, eventId: r.body.event_id as string };
}

const serverSpanOf = (spans: CollectedSpan[]) => spans.find((s) => s.kind === SPAN_KIND.server);

describe('traces', () => {
  let collector: TestCollector;
  before(async () => {
    collector = await TestCollector.start();
  });
  after(async () => {
    await collector.close();
  });

  test('one trace from the publish through three attempts (500, 500, 200), across a restart of Herald', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-traces-'));
    const receiver = await TestReceiver.start();
    receiver.answer = (_req, n) => ({ status: n < 2 ? 500 : 200 });
    const env = tracingEnv(collector, {
      // The first retry waits long enough for the restart between attempts 1 and 2 to come first.
      RETRY_SCHEDULE: '1,0.2',
      OTEL_SERVICE_NAME: 'herald-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=webhooks%20core',
    });
    let herald = await spawnHerald(dataDir, env, 15_000, [], 'herald');
    try {
      const { instanceId, webhookId } = await instanceWithWebhook(herald, receiver.url);
      const publisher = publisherTrace();
      const published = await apiRequest(herald.url, 'POST', `/instances/${instanceId}/events`, {
        body: { event: 'message', payload: messagePayload() },
        headers: { traceparent: publisher.traceparent },
      });
      assert.equal(published.status, 202, JSON.stringify(published.body));
      const eventId = published.body.event_id;
      await eventually(async () => (receiver.received.length >= 1 ? true : undefined), 15_000, 'attempt 1');
      // A graceful stop, then another process on the same data: attempts 2 and 3 are its own.
      await herald.kill('SIGTERM');
      assert.equal(receiver.received.length, 1, 'attempt 2 was not made before the restart');
      herald = await spawnHerald(dataDir, env, 15_000, [], 'herald');
      await eventually(async () => (receiver.received.length >= 3 ? true : undefined), 20_000, 'attempt 3');

      const spans = await collector.waitFor((all) => {
        const trace = all.filter((s) => s.traceId === publisher.traceId);
        return attemptsOf(trace).length >= 3 && serverSpanOf(trace) ? trace : undefined;
      }, 'the publish span and three attempt spans');
      const server = serverSpanOf(spans) as CollectedSpan;
      assert.equal(server.parentSpanId, publisher.spanId, "the publish span continues the publisher's");
      assert.equal(server.name, 'POST /instances/:instance_id/events');
      assert.equal(server.attributes['http.response.status_code'], 202);
      assert.equal(server.attributes['herald.instance_id'], instanceId);
      assert.equal(server.resource['service.name'], 'herald-under-test');
      assert.equal(server.resource['deployment.environment'], 'test');
      assert.equal(server.resource.team, 'webhooks core');

      const attempts = attemptsOf(spans);
      assert.equal(attempts.length, 3);
      assert.deepEqual(
        attempts.map((a) => [
          a.attributes['herald.attempt'],
          a.attributes['herald.outcome'],
          a.attributes['http.response.status_code'],
          a.status,
        ]),
        [
          [1, 'retry', 500, 2],
          [2, 'retry', 500, 2],
          [3, 'delivered', 200, 0],
        ],
      );
      const deliveryId = attempts[0].attributes['herald.delivery_id'];
      assert.match(String(deliveryId), /^dlv_/);
      for (const a of attempts) {
        assert.equal(a.parentSpanId, server.spanId, 'each attempt is a child of the publish span');
        assert.equal(a.kind, SPAN_KIND.client);
        assert.equal(a.attributes['herald.instance_id'], instanceId);
        assert.equal(a.attributes['herald.event_id'], eventId);
        assert.equal(a.attributes['herald.event'], 'message');
        assert.equal(a.attributes['herald.webhook_id'], webhookId);
        assert.equal(a.attributes['herald.delivery_id'], deliveryId);
        assert.ok(a.endMs >= a.startMs);
      }
      // The receiver saw, on each attempt, a traceparent naming that attempt's own span; the signature still holds.
      assert.deepEqual(
        receiver.received.map((r) => r.headers.traceparent),
        attempts.map((a) => `00-${publisher.traceId}-${a.spanId}-01`),
      );
      assert.ok(attempts[1].startMs >= attempts[0].endMs, 'in the order they were made');
    } finally {
      await herald.kill('SIGTERM');
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('the signature does not cover the traceparent: the receiver kit verifies a traced attempt', async () => {
    const receiver = await TestReceiver.start();
    const h = await startTestHerald(tracingEnv(collector));
    try {
      const ins = await h.createInstance();
      await h.createWebhook(ins, {
        destination_url: receiver.url,
        events: ['message'],
        client_sign_secret: SECRET,
      });
      const r = await h.publish(ins, { event: 'message', payload: messagePayload() });
      assert.equal(r.status, 202);
      const got = await eventually(async () => receiver.received[0], 10_000, 'the attempt');
      assert.match(String(got.headers.traceparent), TRACEPARENT, 'a new trace when the publisher sent none');
      const headers = Object.fromEntries(Object.entries(got.headers).map(([k, v]) => [k, String(v)]));
      assert.equal(verify({ secret: SECRET, headers, rawBody: got.rawBody }).ok, true);
      const [, traceId, spanId] = TRACEPARENT.exec(String(got.headers.traceparent)) as RegExpExecArray;
      const attempt = await collector.waitFor(
        (all) => all.find((s) => s.spanId === spanId),
        'the attempt span the receiver was told of',
      );
      assert.equal(attempt.traceId, traceId);
      const server = collector.trace(traceId).find((s) => s.spanId === attempt.parentSpanId);
      assert.equal(server?.kind, SPAN_KIND.server, 'its parent is the publish span');
      assert.equal(server?.parentSpanId, '', 'which began the trace');
    } finally {
      await h.close();
      await receiver.close();
    }
  });

  describe('broker attempts', () => {
    const run = hex(4);
    let h: TestHerald;
    let brokers: BrokerClients;
    const cleanup: (() => Promise<unknown>)[] = [];

    before(async () => {
      h = await startTestHerald(tracingEnv(collector, { DELIVERY_TIMEOUT_MS: '3000' }));
      brokers = await BrokerClients.connect();
    });
    after(async () => {
      await h.close();
      for (const c of cleanup) await c().catch(() => {});
      await brokers.close();
    });

    const publishTo = (url: string) => publishTraced(h, url, { client_sign_secret: SECRET });

    /** The message's traceparent names a PRODUCER attempt span of `system`, child of the publish span. */
    async function assertNamesItsSpan(
      traceparent: string | undefined,
      publisher: { traceId: string },
      system: string,
    ) {
      const m = TRACEPARENT.exec(String(traceparent));
      assert.ok(m, `a traceparent on the message: ${traceparent}`);
      assert.equal(m[1], publisher.traceId, "in the publisher's trace");
      const span = await collector.waitFor(
        (all) => all.find((s) => s.spanId === m[2]),
        `the ${system} attempt span`,
      );
      assert.equal(span.name, 'herald.attempt');
      assert.equal(span.kind, SPAN_KIND.producer);
      assert.equal(span.attributes['messaging.system'], system);
      assert.equal(span.attributes['herald.outcome'], 'delivered');
      assert.equal(span.attributes['herald.attempt'], 1);
      assert.equal(span.attributes['http.response.status_code'], undefined);
      const server = collector.trace(publisher.traceId).find((s) => s.spanId === span.parentSpanId);
      assert.equal(server?.kind, SPAN_KIND.server);
    }

    test('RabbitMQ: a traceparent message header naming its PRODUCER span', async () => {
      const queue = `herald-traces-${run}-q`;
      await brokers.rabbit.queueDeclare({ queue, durable: true });
      cleanup.push(() => brokers.rabbit.queueDelete({ queue }));
      const publisher = await publishTo(
        `amqp://guest:guest@127.0.0.1:5672/%2F?exchange=&routing_key=${queue}`,
      );
      const got: AsyncMessage[] = [];
      const consumer = brokers.rabbit.createConsumer(
        { queue, noAck: true, queueOptions: { durable: true } },
        (m) => {
          got.push(m);
        },
      );
      await eventually(async () => (got.length >= 1 ? true : undefined), 15_000, 'the message');
      await consumer.close();
      const headers = Object.fromEntries(
        Object.entries(got[0].headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      await assertNamesItsSpan(headers.traceparent, publisher, 'rabbitmq');
    });

    test('NATS JetStream: a traceparent message header naming its PRODUCER span', async () => {
      const jsm = brokers.jsm;
      const name = `HERALD_TRACES_${run.toUpperCase()}`;
      await jsm.streams.add({ name, subjects: [`herald.traces.${run}.>`] });
      cleanup.push(() => jsm.streams.delete(name));
      const publisher = await publishTo(`nats://127.0.0.1:4222/herald.traces.${run}.events`);
      const consumer = await jetstream(brokers.nats).consumers.get(name);
      const m = await eventually(async () => (await consumer.next({ expires: 1_000 })) ?? undefined, 15_000);
      await assertNamesItsSpan(m.headers?.get('traceparent'), publisher, 'nats');
    });

    test('Redis Streams: a traceparent field of the entry naming its PRODUCER span', async () => {
      const stream = `herald:traces:${run}`;
      cleanup.push(() => brokers.redis.del(stream));
      const publisher = await publishTo(`redis://127.0.0.1:6379/0?stream=${encodeURIComponent(stream)}`);
      const entry = await eventually(async () => {
        const entries = (await brokers.redis.xRange(stream, '-', '+')) as unknown as {
          message: Record<string, string>;
        }[];
        return entries[0];
      }, 15_000);
      assert.equal(entry.message.event_id, publisher.eventId);
      await assertNamesItsSpan(entry.message.traceparent, publisher, 'redis');
    });
  });

  test("an engine's publish (WAHA's webhook) and its media download are spans of the engine's trace", async () => {
    const files = await EngineFiles.start();
    const receiver = await TestReceiver.start();
    const h = await startTestHerald(tracingEnv(collector, { ENGINE_MEDIA_PREFIXES: files.prefix }));
    try {
      const ins = await h.createInstance();
      await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
      const url = files.serve('traced.png', { bytes: pngImage(16), type: 'image/png' });
      const payload = {
        id: 'false_491701234567@c.us_3EB0TRACED0000000001',
        timestamp: 1763719200,
        from: '491701234567@c.us',
        fromMe: false,
        body: 'look',
        hasMedia: true,
        media: { url, mimetype: 'image/png', filename: null, error: null },
      };
      const publisher = publisherTrace();
      const r = await postWaha(h.url, ins, wahaBody('message', payload), {
        headers: { traceparent: publisher.traceparent },
      });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const spans = await collector.waitFor((all) => {
        const trace = all.filter((s) => s.traceId === publisher.traceId);
        return trace.length >= 3 ? trace : undefined;
      }, 'the engine publish, the download and the attempt');
      const server = serverSpanOf(spans) as CollectedSpan;
      assert.equal(server.name, 'POST /instances/:instance_id/engine/waha');
      assert.equal(server.parentSpanId, publisher.spanId);
      const download = spans.find((s) => s.name === 'herald.media.download') as CollectedSpan;
      assert.equal(download?.parentSpanId, server.spanId);
      assert.equal(download.attributes['herald.event_id'], r.body.event_id);
      assert.equal(download.status, 0);
      const [attempt] = attemptsOf(spans);
      assert.equal(attempt.parentSpanId, server.spanId);
      assert.ok(attempt.startMs >= download.endMs, 'the delivery waited for the download');
    } finally {
      await h.close();
      await receiver.close();
      await files.close();
    }
  });

  test('the default protocol is OTLP/HTTP protobuf, sent to the traces endpoint as given', async () => {
    const receiver = await TestReceiver.start();
    const protobuf = await TestCollector.start();
    const h = await startTestHerald({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${protobuf.url}/custom/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    try {
      const publisher = await publishTraced(h, receiver.url);
      const traceBytes = Buffer.from(publisher.traceId, 'hex');
      // The publish span and the attempt span, each holding the trace id's 16 bytes as protobuf carries them.
      await eventually(
        async () =>
          protobuf.exports.filter((e) => e.body.includes(traceBytes)).length >= 1 &&
          receiver.received.length === 1 &&
          protobuf.exports.reduce((n, e) => n + countOf(e.body, traceBytes), 0) >= 2
            ? true
            : undefined,
        15_000,
        'both spans, in protobuf',
      );
      for (const e of protobuf.exports) {
        assert.equal(e.path, '/custom/traces');
        assert.equal(e.contentType, 'application/x-protobuf');
      }
    } finally {
      await h.close();
      await receiver.close();
      await protobuf.close();
    }
  });

  test('a collector that is down costs deliveries nothing, and the log says spans are dropped', async () => {
    const gone = await TestCollector.start();
    await gone.close(); // its port now refuses
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const receiver = await TestReceiver.start();
    const h = await startTestHerald(tracingEnv(gone), { logger });
    try {
      await publishTraced(h, receiver.url);
      await eventually(async () => receiver.received[0], 10_000, 'the delivery');
      const warning = await eventually(
        async () => lines.map((l) => JSON.parse(l)).find((l) => /could not send spans/.test(l.msg)),
        15_000,
        'the warning',
      );
      assert.equal(warning.url, `${gone.url}/v1/traces`);
      assert.ok(warning.lost_spans >= 1);
    } finally {
      await h.close();
      await receiver.close();
    }
  });

  test('with no OTEL_* variable set: nothing is sent and no attempt carries a traceparent', async () => {
    // A collector where the SDK's default endpoint is, when that port is free: it must stay silent.
    const standard = await TestCollector.start(4318).catch(() => null);
    const receiver = await TestReceiver.start();
    const h = await startTestHerald();
    let closed = false;
    try {
      const publisher = await publishTraced(h, receiver.url);
      const got = await eventually(async () => receiver.received[0], 10_000, 'the attempt');
      assert.equal(got.headers.traceparent, undefined, "the publisher's traceparent is not passed on either");
      // Closing would flush spans, had there been any.
      await h.close();
      closed = true;
      assert.equal(standard?.exports.length ?? 0, 0);
      assert.equal(collector.trace(publisher.traceId).length, 0);
    } finally {
      if (!closed) await h.close();
      await receiver.close();
      await standard?.close();
    }
  });
});

function countOf(haystack: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}
