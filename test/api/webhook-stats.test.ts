/**
 * GET …/webhooks/{webhook_id}/stats: a webhook's deliveries per UTC hour. Attempts are placed in known hours by
 * moving Herald's clock forward an hour at a time (it still runs, so answer times are real), against a real
 * receiver; the buckets, and the health line's figures on the webhook view, must say what happened in each hour.
 * Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HOUR_MS } from '../../src/domain/health.ts';
import type { StatsBucket } from '../../src/ui/assets/api.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { HourClock, hourFromNow } from '../support/hour-clock.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
let receiver: TestReceiver;
/** Hours A…E of the test (A = 0), ahead of the real clock: the last one Herald's present hour. */
const clock = new HourClock(hourFromNow(10));
const A = clock.first;
const moveTo = (hour: number) => clock.at(hour, () => h?.herald.dispatcher.wake());

let ins = '';
let whk = '';

before(async () => {
  moveTo(0);
  // Three attempts at most; a retry falls due only when the test moves the clock on (ten minutes after a failure).
  h = await startTestHerald({ RETRY_SCHEDULE: '600,600' }, { clock: clock.now });
  receiver = await TestReceiver.start();
  ins = await h.createInstance('stats');
  whk = await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
});
after(async () => {
  await h.close();
  await receiver.close();
});

const stats = async (query = '') => {
  const r = await h.request('GET', `/instances/${ins}/webhooks/${whk}/stats${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.buckets as StatsBucket[];
};

/** Waits until the receiver has had `n` requests and their attempts are in the log. */
async function attempted(n: number) {
  await receiver.waitFor(n, 15_000);
  await eventually(async () => {
    const r = await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${whk}`);
    const total = r.body.deliveries.reduce((sum: number, d: any) => sum + d.attempt_count, 0);
    return total === n ? true : undefined;
  });
}

test('each hour says what ended in it and what was retried; the health line agrees', async () => {
  // Event "slow" fails twice and is delivered at its third attempt; event "down" fails all three.
  const tries = new Map<string, number>();
  receiver.answer = (req) => {
    const body = req.body.payload.body as string;
    tries.set(body, (tries.get(body) ?? 0) + 1);
    const ok = (body === 'slow' && tries.get(body) === 3) || tries.get(body) === 4;
    return ok ? { status: 200, delayMs: 60 } : { status: 503, delayMs: 20 };
  };
  await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'slow' }) });
  await attempted(1); // A: slow #1 fails
  moveTo(1);
  await attempted(2); // B: slow #2 fails
  moveTo(2);
  await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'down' }) });
  await attempted(4); // C: slow #3 delivered, down #1 fails
  moveTo(3);
  await attempted(5); // D: down #2 fails
  moveTo(4);
  await attempted(6); // E: down #3 fails for good

  const buckets = await stats('?hours=5');
  assert.deepEqual(
    buckets.map((b) => b.start),
    [0, 1, 2, 3, 4].map((i) => new Date(A + i * HOUR_MS).toISOString()),
    'five hours, oldest first, each on a UTC hour, the last the present one',
  );
  // Per hour A…E: [delivered, failed, retried_attempts].
  const counts = (bs: StatsBucket[]) => bs.map((b) => [b.delivered, b.failed, b.retried_attempts]);
  const before = [
    [0, 0, 1],
    [0, 0, 1],
    [1, 0, 1],
    [0, 0, 1],
    [0, 1, 0],
  ];
  assert.deepEqual(counts(buckets), before);
  // Answer times are real: the receiver took 20 ms to refuse and 60 ms to take the delivery.
  const c = buckets[2];
  assert.ok(c.p50_ms !== null && c.p50_ms >= 20, `p50 ${c.p50_ms}`);
  assert.ok(c.p95_ms !== null && c.p95_ms >= 60, `p95 ${c.p95_ms}`);
  for (const b of buckets) assert.ok(b.p50_ms !== null && b.p95_ms !== null && b.p50_ms <= b.p95_ms);

  // 24 buckets by default; the hours before A had nothing, so their times are null.
  const day = await stats();
  assert.equal(day.length, 24);
  assert.equal(day[23].start, buckets[4].start);
  assert.deepEqual(day[0], {
    start: new Date(A - 19 * HOUR_MS).toISOString(),
    delivered: 0,
    failed: 0,
    retried_attempts: 0,
    p50_ms: null,
    p95_ms: null,
  });

  assert.deepEqual(await health(), { attempts_24h: 6, delivered_24h: 1, failed_24h: 1, retried_24h: 4 });

  // "down" redelivered in hour E, and delivered: its failure had not ended it after all, and was followed.
  const failed = await h.request('GET', `/instances/${ins}/deliveries?status=failed`);
  const again = await h.request(
    'POST',
    `/instances/${ins}/deliveries/${failed.body.deliveries[0].delivery_id}/redeliver`,
  );
  assert.equal(again.status, 202, JSON.stringify(again.body));
  await attempted(7);
  const after = await stats('?hours=5');
  assert.deepEqual(
    counts(after),
    [...before.slice(0, 4), [1, 0, 1]],
    'hour E: delivered, its failure retried',
  );
  assert.deepEqual(
    await health(),
    { attempts_24h: 7, delivered_24h: 2, failed_24h: 0, retried_24h: 5 },
    'the health line counts as the stats do: 2 of 2 delivered',
  );
});

/** The 24-hour figures of the webhook's health, as its view gives them. */
async function health() {
  const view = await h.request('GET', `/instances/${ins}/webhooks/${whk}`);
  const { attempts_24h, delivered_24h, failed_24h, retried_24h } = view.body.webhook.health;
  return { attempts_24h, delivered_24h, failed_24h, retried_24h };
}

test('hours outside 1…168 is a 400 that names the field and the rule', async () => {
  for (const hours of ['0', '169', '2.5', 'x', '-1', '024']) {
    const r = await h.request('GET', `/instances/${ins}/webhooks/${whk}/stats?hours=${hours}`);
    assert.equal(r.status, 400, hours);
    assert.equal(r.body.error.details[0].field, 'hours');
    assert.match(r.body.error.message, /^hours: .*1 to 168/);
  }
  assert.equal((await stats('?hours=168')).length, 168);
  assert.equal((await stats('?hours=1')).length, 1);
});

test('any principal that may read the webhook reads its stats: a read-only portal link, not a publish key', async () => {
  const key = (await h.request('POST', `/instances/${ins}/keys`)).body.key;
  const link = await h.request('POST', `/instances/${ins}/portal-links`, { body: { read_only: true }, key });
  assert.equal(link.status, 201, JSON.stringify(link.body));
  const token = new URL(link.body.url).hash.slice(1);
  const path = `/instances/${ins}/webhooks/${whk}/stats`;
  assert.equal((await h.request('GET', path, { key: token })).status, 200);
  const publish = (await h.request('POST', `/instances/${ins}/keys`, { body: { scope: 'publish' } })).body
    .key;
  assert.equal((await h.request('GET', path, { key: publish })).status, 403);
  const other = await h.createInstance('another');
  const otherKey = (await h.request('POST', `/instances/${other}/keys`)).body.key;
  assert.equal((await h.request('GET', path, { key: otherKey })).status, 403);
  const missing = await h.request('GET', `/instances/${ins}/webhooks/whk_nothing/stats`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'not_found');
});
