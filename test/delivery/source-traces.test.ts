/**
 * Traces of what a queue source consumes, with the test collector: each message is a CONSUMER span, continuing the
 * `traceparent` the message carries (an AMQP or NATS header, a Redis entry's field) or beginning a trace; the
 * attempts of its event are children of that span, and a parked message's span is an error naming the reason. With
 * tracing off, a message's traceparent goes nowhere. On the real RabbitMQ, JetStream and Redis; run on SQLite and,
 * in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { messageBody, numberOf } from '../sources/messages.ts';
import { KINDS, type Kind, natsConsumerFirst, type TestQueue, testQueue } from '../sources/rig.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import {
  type CollectedSpan,
  hex,
  publisherTrace,
  SPAN_KIND,
  TestCollector,
  TRACEPARENT,
  tracingEnv,
} from '../support/otlp-collector.ts';
import { TestReceiver } from '../support/receiver.ts';

const SYSTEM: Record<Kind, string> = { amqp: 'rabbitmq', nats: 'nats', redis: 'redis' };

/** The queue (RabbitMQ) or stream (JetStream, Redis) a source reads. */
function destinationOf(q: TestQueue): string {
  const url = new URL(q.url());
  if (q.kind === 'nats') return url.pathname.slice(1);
  return url.searchParams.get(q.kind === 'amqp' ? 'queue' : 'stream') ?? '';
}

/** A source of Herald's format on `q` into `ins`; its id. */
async function heraldSource(h: TestHerald, q: TestQueue, ins: string): Promise<string> {
  const r = await h.request('POST', '/sources', {
    body: { url: q.url(), format: 'herald', instance_id: ins },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.source.source_id;
}

describe('source traces', () => {
  let collector: TestCollector;
  let h: TestHerald;
  let receiver: TestReceiver;
  before(async () => {
    collector = await TestCollector.start();
    h = await startTestHerald(tracingEnv(collector));
    receiver = await TestReceiver.start();
  });
  after(async () => {
    await h.close();
    await receiver.close();
    await collector.close();
  });

  for (const kind of KINDS) {
    test(`${kind}: a CONSUMER span per message, continuing its traceparent, parent of its attempts`, async () => {
      const q = await testQueue(kind);
      const run = hex(4);
      try {
        if (kind === 'nats') await natsConsumerFirst(q);
        const ins = await h.createInstance();
        await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
        const publisher = publisherTrace();
        await q.publish(messageBody('herald', 1, run), `${run}-1`, publisher.traceparent);
        await q.publish(messageBody('herald', 2, run), `${run}-2`);
        const poison = publisherTrace();
        await q.publish('{"not json', `${run}-3`, poison.traceparent);
        const id = await heraldSource(h, q, ins);
        const mine = () => receiver.received.filter((r) => r.body.payload?.id?.includes(`_${run}_`));
        await eventually(async () => (mine().length >= 2 ? true : undefined), 20_000, 'two deliveries');
        const attemptOf = (n: number) => {
          const got = mine().find((r) => numberOf(r.body) === n);
          const m = TRACEPARENT.exec(String(got?.headers.traceparent));
          assert.ok(m, `message ${n}'s attempt carries a traceparent`);
          return collector.waitFor(
            (all) => all.find((s) => s.spanId === m[2]),
            `message ${n}'s attempt span`,
          );
        };
        const consumerOf = (attempt: CollectedSpan) => {
          const span = collector.trace(attempt.traceId).find((s) => s.spanId === attempt.parentSpanId);
          assert.ok(span, "the attempt's parent span was exported");
          assert.equal(span.name, 'herald.source.message');
          assert.equal(span.kind, SPAN_KIND.consumer);
          assert.equal(span.attributes['messaging.system'], SYSTEM[kind]);
          assert.equal(span.attributes['messaging.destination.name'], destinationOf(q));
          return span;
        };
        // The message that carried a traceparent: its span continues the publisher's trace.
        const first = await attemptOf(1);
        assert.equal(first.traceId, publisher.traceId, "the attempt is in the publisher's trace");
        assert.equal(
          consumerOf(first).parentSpanId,
          publisher.spanId,
          "the consumer span is the publisher's child",
        );
        // The one without: a trace of its own, begun by its consumer span.
        const second = await attemptOf(2);
        assert.notEqual(second.traceId, publisher.traceId);
        assert.equal(consumerOf(second).parentSpanId, '', 'the consumer span began the trace');
        // The parked one: an error span, with the reason.
        const parked = await collector.waitFor(
          (all) => all.find((s) => s.traceId === poison.traceId),
          'the parked message span',
        );
        assert.equal(parked.name, 'herald.source.message');
        assert.equal(parked.parentSpanId, poison.spanId);
        assert.equal(parked.status, 2, 'an error');
        assert.equal(parked.kind, SPAN_KIND.consumer);
        await h.request('DELETE', `/sources/${id}`);
      } finally {
        await q.remove();
      }
    });
  }
});

test('with tracing off, a message’s traceparent is not passed on to its attempts', async () => {
  const h = await startTestHerald();
  const receiver = await TestReceiver.start();
  const q = await testQueue('amqp');
  const run = hex(4);
  try {
    const ins = await h.createInstance();
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
    await q.publish(messageBody('herald', 1, run), `${run}-1`, publisherTrace().traceparent);
    await heraldSource(h, q, ins);
    const got = await eventually(async () => receiver.received[0], 20_000, 'the delivery');
    assert.equal(numberOf(got.body), 1);
    assert.equal(got.headers.traceparent, undefined);
  } finally {
    await q.remove();
    await h.close();
    await receiver.close();
  }
});
