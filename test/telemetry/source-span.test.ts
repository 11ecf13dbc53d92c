/**
 * withSourceSpan, the span the queue sources start per message: a CONSUMER span continuing the message's traceparent,
 * whose context the ingest gets to store; an error status when the ingest fails; nothing at all with tracing off.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { withSourceSpan } from '../../src/telemetry/source-span.ts';
import { Tracing } from '../../src/telemetry/tracing.ts';
import { tracingConfig } from '../../src/telemetry/tracing-config.ts';
import { TestCollector } from '../support/otlp-collector.ts';

let collector: TestCollector;
let tracing: Tracing;
before(async () => {
  collector = await TestCollector.start();
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '20',
  };
  const config = tracingConfig((name) => env[name]);
  assert.ok(config && !('error' in config));
  tracing = new Tracing(config, 'test', { warn() {}, info() {} });
});
after(async () => {
  await tracing.shutdown();
  await collector.close();
});

test("a CONSUMER span continuing the message's traceparent; the ingest gets its context to store", async () => {
  const traceId = randomBytes(16).toString('hex');
  const parent = randomBytes(8).toString('hex');
  const stored = await withSourceSpan(
    tracing,
    { system: 'rabbitmq', source: 'orders', traceparent: `00-${traceId}-${parent}-01`, instanceId: 'ins_1' },
    async (trace) => trace,
  );
  const [, storedTrace, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(stored)) ?? [];
  assert.equal(storedTrace, traceId);
  const span = await collector.waitFor((all) => all.find((s) => s.spanId === spanId), 'the source span');
  assert.equal(span.name, 'herald.source.message');
  assert.equal(span.kind, 5, 'CONSUMER');
  assert.equal(span.parentSpanId, parent);
  assert.deepEqual(
    [
      span.attributes['messaging.system'],
      span.attributes['messaging.destination.name'],
      span.attributes['herald.instance_id'],
    ],
    ['rabbitmq', 'orders', 'ins_1'],
  );
  assert.equal(span.status, 0);
});

test('an ingest that fails: the error goes on to the caller (no ack), the span says error', async () => {
  let trace: string | null = null;
  await assert.rejects(
    withSourceSpan(tracing, { system: 'nats', source: 'events.in' }, async (t) => {
      trace = t;
      throw new Error('instance not found');
    }),
    /instance not found/,
  );
  const spanId = String(trace).split('-')[2];
  const span = await collector.waitFor(
    (all) => all.find((s) => s.spanId === spanId),
    'the failed source span',
  );
  assert.equal(span.parentSpanId, '', 'a new trace: the message carried none');
  assert.equal(span.status, 2);
});

test('tracing off: the ingest runs with no context to store', async () => {
  assert.equal(
    await withSourceSpan(null, { system: 'redis', source: 's', traceparent: '00-x' }, async (t) => t),
    null,
  );
});
