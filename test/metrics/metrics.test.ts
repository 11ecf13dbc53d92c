/** /metrics scraped during a real run: its counters match the deliveries made, its gauges the work in flight. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HeraldMetrics } from '../../src/metrics/metrics.ts';
import { postWaha, wahaBody } from '../support/engine.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
let slow: TestReceiver;
let gone: TestReceiver;
let broken: TestReceiver;
let ins = '';

before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.05,0.05' });
  [slow, gone, broken] = await Promise.all([
    TestReceiver.start(),
    TestReceiver.start(),
    TestReceiver.start(),
  ]);
  ins = await h.createInstance('metrics');
});
after(async () => {
  await h.close();
  await Promise.all([slow.close(), gone.close(), broken.close()]);
});

async function scrape(): Promise<string> {
  const r = await h.request('GET', '/metrics');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
  return r.body as string;
}

/** The value of one sample, e.g. value(text, 'herald_deliveries_total', 'outcome="delivered"'); 0 when absent. */
function value(text: string, name: string, labels = ''): number {
  const line = text
    .split('\n')
    .find((l) => (labels ? l.startsWith(`${name}{`) && l.includes(labels) : l.startsWith(`${name} `)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

test('queue depth and in-flight attempts are visible while deliveries are under way', async () => {
  slow.answer = () => ({ status: 200, delayMs: 3000 });
  await h.createWebhook(ins, { destination_url: slow.url, events: ['message'] });
  const events = Array.from({ length: 5 }, () => ({ event: 'message', payload: messagePayload() }));
  await h.request('POST', `/instances/${ins}/events/batch`, { body: { events } });
  await slow.waitFor(5);
  const during = await scrape();
  assert.equal(value(during, 'herald_in_flight_attempts_busiest_webhook'), 5);
  assert.equal(value(during, 'herald_in_flight_attempts'), 5);
  assert.equal(value(during, 'herald_queue_depth'), 5, 'in flight is still pending');
  assert.equal(value(during, 'herald_queue_due'), 0, 'leased ones are not waiting');
  await eventually(async () => (value(await scrape(), 'herald_queue_depth') === 0 ? true : undefined));
});

test('counters match the deliveries made: delivered, gone, attempts exhausted; latency counts every attempt', async () => {
  gone.answer = () => ({ status: 410 });
  broken.answer = () => ({ status: 500 });
  await h.createWebhook(ins, { destination_url: gone.url, events: ['message.ack'] });
  await h.createWebhook(ins, { destination_url: broken.url, events: ['session.status'] });
  const ack = { id: 'true_1@c.us_A', from: '1@c.us', to: '2@c.us', ack: 2, ackName: 'DEVICE' };
  assert.equal((await h.publish(ins, { event: 'message.ack', payload: ack })).status, 202);
  assert.equal(
    (await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } })).status,
    202,
  );
  const log = await eventually(async () => {
    const r = await h.request('GET', `/instances/${ins}/deliveries?limit=200`);
    const all = r.body.deliveries as {
      status: string;
      attempt_count: number;
      failure_reason: string | null;
    }[];
    return all.length === 7 && all.every((d) => d.status !== 'pending') ? all : undefined;
  });
  const text = await scrape();
  const delivered = log.filter((d) => d.status === 'delivered').length;
  assert.equal(delivered, 5);
  assert.equal(value(text, 'herald_deliveries_total', 'outcome="delivered"'), delivered);
  assert.equal(value(text, 'herald_deliveries_total', 'outcome="gone"'), 1);
  assert.equal(value(text, 'herald_deliveries_total', 'outcome="attempts_exhausted"'), 1);
  assert.equal(value(text, 'herald_attempts_total', 'result="2xx"'), 5);
  assert.equal(value(text, 'herald_attempts_total', 'result="410"'), 1);
  assert.equal(
    value(text, 'herald_attempts_total', 'result="5xx"'),
    3,
    'the 3 attempts of RETRY_SCHEDULE 0.05,0.05',
  );
  const attempts = log.reduce((sum, d) => sum + d.attempt_count, 0);
  assert.equal(value(text, 'herald_attempt_duration_seconds_count'), attempts);
  assert.equal(value(text, 'herald_events_ingested_total', 'event="message"'), 5);
  assert.equal(value(text, 'herald_events_ingested_total', 'event="message.ack"'), 1);
  assert.equal(value(text, 'herald_events_ingested_total', 'event="session.status"'), 1);
  assert.equal(value(text, 'herald_queue_depth'), 0);
  assert.equal(value(text, 'herald_queue_oldest_due_age_seconds'), 0);
});

test('a repeated event_id is not counted as ingested again', async () => {
  const before = value(await scrape(), 'herald_events_ingested_total', 'event="presence.update"');
  const event = { event: 'presence.update', event_id: 'evt_metrics_repeat', payload: { id: 'x' } };
  await h.publish(ins, event);
  await h.publish(ins, event);
  assert.equal(value(await scrape(), 'herald_events_ingested_total', 'event="presence.update"'), before + 1);
});

test('an engine kind outside the catalog is counted as "other": made-up kinds cannot grow /metrics', async () => {
  const base = await scrape();
  const before = value(base, 'herald_events_ingested_total', 'event="other"');
  const made = 150;
  for (let i = 0; i < made; i++) {
    const res = await postWaha(h.url, ins, wahaBody(`made.up.kind.${i}.${'x'.repeat(200)}`, { n: i }));
    assert.equal(res.status, 202, JSON.stringify(res.body));
  }
  // A kind from the catalog keeps its own series.
  await postWaha(h.url, ins, wahaBody('presence.update', { id: '491701234567@c.us', presences: [] }));
  const text = await scrape();
  assert.equal(value(text, 'herald_events_ingested_total', 'event="other"'), before + made);
  assert.ok(!text.includes('made.up.kind'), 'no made-up kind is a label');
  const series = (t: string) =>
    t.split('\n').filter((l) => l.startsWith('herald_events_ingested_total{')).length;
  assert.ok(series(text) <= series(base) + 2, `${series(base)} series before, ${series(text)} after`);
  // 150 series of their own would add over 40 KB; the process metrics beside them vary by a few hundred bytes.
  assert.ok(text.length < base.length + 5000, `/metrics grew from ${base.length} to ${text.length} bytes`);
});

test('every label takes bounded values: an unknown error or media reason is "other"', async () => {
  const metrics = new HeraldMetrics({
    queueStats: async () => ({ pending: 0, due: 0, oldest_due_at: null }),
    inFlight: () => new Map(),
    webhookHealth: async () => new Map(),
    now: () => 0,
  });
  const attempt = (status_code: number | null, error: string | null) =>
    metrics.attemptFinished(
      { started_at: 0, duration_ms: 5, status_code, error, response_body: null, retry_after: null },
      { kind: 'retry', at: 0, reason: 'schedule' },
    );
  for (let i = 0; i < 100; i++) {
    // A broker's refusal comes in words (its host, user, subject): each would be a series of its own.
    attempt(null, `authentication failed for user "u${i}"`);
    metrics.engineMediaFailed(`reason ${i}`);
    metrics.eventsIngested([`kind.${i}`]);
  }
  attempt(null, 'timeout');
  attempt(503, null);
  attempt(999, null);
  metrics.engineMediaFailed('timeout');
  const text = await metrics.text();
  assert.equal(value(text, 'herald_attempts_total', 'result="other"'), 100);
  assert.equal(value(text, 'herald_attempts_total', 'result="timeout"'), 1);
  assert.equal(value(text, 'herald_attempts_total', 'result="5xx"'), 1);
  assert.equal(value(text, 'herald_attempts_total', 'result="9xx"'), 1);
  assert.equal(value(text, 'herald_engine_media_failures_total', 'reason="other"'), 100);
  assert.equal(value(text, 'herald_engine_media_failures_total', 'reason="timeout"'), 1);
  assert.equal(value(text, 'herald_events_ingested_total', 'event="other"'), 100);
  const labelled = text
    .split('\n')
    .filter((l) => /^herald_(attempts|engine_media_failures|events_ingested)_total\{/.test(l));
  assert.ok(labelled.length < 20, `${labelled.length} series`);
});

test('/metrics needs the admin key: 401 without a key, 403 with an instance key', async () => {
  assert.equal((await h.request('GET', '/metrics', { key: null })).status, 401);
  const key = (await h.request('POST', `/instances/${ins}/keys`, { body: {} })).body.key;
  const r = await h.request('GET', '/metrics', { key });
  assert.equal(r.status, 403);
});

test('in flight: the total, and the busiest webhook without naming any, so thousands of webhooks add no series', async () => {
  const inFlight = new Map(Array.from({ length: 2500 }, (_, i) => [`whk_${i}`, (i % 25) + 1]));
  const metrics = new HeraldMetrics({
    queueStats: async () => ({ pending: 0, due: 0, oldest_due_at: null }),
    inFlight: () => inFlight,
    webhookHealth: async () => new Map(),
    now: () => 0,
  });
  const text = await metrics.text();
  assert.equal(text.includes('webhook_id='), false, 'no series per webhook');
  assert.equal(value(text, 'herald_in_flight_attempts_busiest_webhook'), 25);
  assert.equal(value(text, 'herald_in_flight_attempts'), 100 * 325);
});

test('the oldest due age is measured from the clock at scrape time', async () => {
  const metrics = new HeraldMetrics({
    queueStats: async () => ({ pending: 3, due: 2, oldest_due_at: 10_000 }),
    inFlight: () => new Map(),
    webhookHealth: async () => new Map(),
    now: () => 25_000,
  });
  const text = await metrics.text();
  assert.equal(value(text, 'herald_queue_oldest_due_age_seconds'), 15);
  assert.equal(value(text, 'herald_queue_due'), 2);
  assert.equal(value(text, 'herald_queue_depth'), 3);
});

test('webhook health for the fleet: failing webhooks, the longest streak, deliveries and retries of 24 h, and no webhook_id', async () => {
  const health = new Map(
    Array.from({ length: 3000 }, (_, i) => [
      `whk_${i}`,
      {
        last_delivered_at: 1_000_000 + i * 1000,
        last_failed_at: null,
        consecutive_failures: i < 7 ? i + 1 : 0,
        attempts_24h: 4,
        delivered_24h: 2,
        failed_24h: 1,
        retried_24h: 1,
      },
    ]),
  );
  const metrics = new HeraldMetrics({
    queueStats: async () => ({ pending: 0, due: 0, oldest_due_at: null }),
    inFlight: () => new Map(),
    webhookHealth: async () => health,
    now: () => 0,
  });
  const text = await metrics.text();
  assert.equal(text.includes('webhook_id='), false, 'three thousand webhooks, not one series each');
  assert.equal(value(text, 'herald_webhooks_failing'), 7);
  assert.equal(value(text, 'herald_webhook_consecutive_failures_max'), 7);
  assert.equal(value(text, 'herald_webhook_attempts_24h'), 12_000);
  assert.equal(value(text, 'herald_webhook_retried_attempts_24h'), 3000);
  assert.equal(value(text, 'herald_webhook_deliveries_24h', 'outcome="delivered"'), 6000);
  assert.equal(value(text, 'herald_webhook_deliveries_24h', 'outcome="failed"'), 3000);
});
