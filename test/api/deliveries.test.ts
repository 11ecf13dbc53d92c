/** SPEC §8: the delivery log API, its detail, and manual redelivery (one, and bulk). */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Answer, TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05' });
});
after(() => h.close());

const DELIVERY_FIELDS = `delivery_id event_id event webhook_id status attempt_count created_at last_attempt_at
  next_attempt_at last_status_code last_error failure_reason chat waiting_for`.split(/\s+/);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A receiver answering `answer` (closed when the test ends) behind an enabled webhook of `ins`. */
async function hook(t: TestContext, ins: string, answer: Answer = { status: 200 }, events = ['*']) {
  const r = await TestReceiver.start();
  t.after(() => r.close());
  r.answer = () => answer;
  const id = await h.createWebhook(ins, { destination_url: r.url, events });
  return { r, id };
}

async function publish(ins: string, body = 'Hello', event = 'message'): Promise<string> {
  const payload =
    event === 'message' ? messagePayload({ body }) : { id: 'm', from: 'a', to: 'b', ack: 3, ackName: 'READ' };
  const res = await h.publish(ins, { event, payload });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.event_id;
}

const api = (method: string, path: string, body?: unknown) => h.request(method, path, { body });

async function list(ins: string, query = ''): Promise<any[]> {
  const res = await api('GET', `/instances/${ins}/deliveries?limit=200${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.deliveries;
}

async function detail(ins: string, id: string): Promise<any> {
  const res = await api('GET', `/instances/${ins}/deliveries/${id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.delivery;
}

/** Waits until every delivery of `ins` is finished (none pending) and returns them, newest first. */
const settled = (ins: string) =>
  eventually(async () => {
    const all = await list(ins);
    return all.some((d) => d.status === 'pending') ? undefined : all;
  });

const setEnabled = async (ins: string, id: string, enabled: boolean) =>
  assert.equal((await api('POST', `/instances/${ins}/webhooks/${id}/enabled`, { enabled })).status, 200);

describe('list', () => {
  test('newest first, with exactly the Delivery fields', async (t) => {
    const ins = await h.createInstance();
    const { id } = await hook(t, ins);
    const events = [await publish(ins, 'a'), await publish(ins, 'b'), await publish(ins, 'c')];
    const all = await settled(ins);
    assert.deepEqual(
      all.map((d) => d.event_id),
      events.reverse(),
    );
    for (const d of all) {
      assert.deepEqual(Object.keys(d).sort(), [...DELIVERY_FIELDS].sort());
      assert.match(d.delivery_id, /^dlv_/);
      assert.match(d.created_at, ISO);
      assert.match(d.last_attempt_at, ISO);
      const { delivery_id, event_id, created_at, last_attempt_at, ...rest } = d;
      assert.deepEqual(rest, {
        event: 'message',
        webhook_id: id,
        status: 'delivered',
        attempt_count: 1,
        next_attempt_at: null,
        last_status_code: 200,
        last_error: null,
        failure_reason: null,
        chat: '491701234567@c.us',
        waiting_for: null,
      });
    }
  });

  test('filters by status, webhook_id, event and event_id; bad filter values are a 400', async (t) => {
    const ins = await h.createInstance();
    const ok = await hook(t, ins, { status: 200 });
    const bad = await hook(t, ins, { status: 500 });
    const msg = await publish(ins);
    const ack = await publish(ins, '', 'message.ack');
    await settled(ins);
    const pairs = async (q: string) =>
      (await list(ins, q)).map((d) => `${d.webhook_id === ok.id ? 'ok' : 'bad'}:${d.event_id}`).sort();
    assert.deepEqual(await pairs('&status=failed'), [`bad:${ack}`, `bad:${msg}`].sort());
    assert.deepEqual(await pairs('&status=delivered'), [`ok:${ack}`, `ok:${msg}`].sort());
    assert.deepEqual(await pairs(`&webhook_id=${bad.id}`), [`bad:${ack}`, `bad:${msg}`].sort());
    assert.deepEqual(await pairs('&event=message.ack'), [`bad:${ack}`, `ok:${ack}`].sort());
    assert.deepEqual(await pairs(`&event=message&webhook_id=${ok.id}`), [`ok:${msg}`]);
    assert.deepEqual(await pairs('&status=pending'), []);
    assert.deepEqual(await pairs(`&event_id=${msg}`), [`bad:${msg}`, `ok:${msg}`].sort());

    for (const q of [
      'status=done',
      'webhook_id=abc',
      'event=mesage',
      'event_id=nope',
      'limit=0',
      'limit=201',
      'cursor=x',
      'since=yesterday',
      'until=2026-13-01T00:00:00Z',
    ]) {
      const res = await api('GET', `/instances/${ins}/deliveries?${q}`);
      assert.equal(res.status, 400, q);
      assert.match(res.body.error.message, new RegExp(q.split('=')[0]), q);
    }
  });

  test('filters by a date range: since (created at or after) and until (created before)', async (t) => {
    const ins = await h.createInstance();
    await hook(t, ins);
    for (let i = 0; i < 4; i++) {
      await publish(ins, `m${i}`);
      // Distinct creation times, so that each bound splits the log somewhere.
      const last = (await list(ins))[0].created_at;
      await eventually(async () => (new Date().toISOString() > last ? true : undefined));
    }
    const all = await settled(ins);
    const times = all.map((d) => d.created_at as string).sort();
    const ids = (q: string) => list(ins, q).then((ds) => ds.map((d) => d.delivery_id).sort());
    const expect = (keep: (created: string) => boolean) =>
      all
        .filter((d) => keep(d.created_at))
        .map((d) => d.delivery_id)
        .sort();
    const [, second, third] = times;
    assert.deepEqual(
      await ids(`&since=${second}`),
      expect((c) => c >= second),
    );
    assert.deepEqual(
      await ids(`&until=${third}`),
      expect((c) => c < third),
    );
    assert.deepEqual(
      await ids(`&since=${second}&until=${third}`),
      expect((c) => c >= second && c < third),
    );
    assert.equal((await ids(`&since=${second}&until=${third}`)).length, 1);
    // Any RFC 3339 offset names the same instant.
    const plusTwo = new Date(Date.parse(second) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.deepEqual(
      await ids(`&since=${encodeURIComponent(plusTwo)}`),
      expect((c) => c >= second),
    );
  });

  test('limit and cursor walk every delivery exactly once', async (t) => {
    const ins = await h.createInstance();
    await hook(t, ins);
    for (let i = 0; i < 7; i++) await publish(ins, `m${i}`);
    const all = (await settled(ins)).map((d) => d.delivery_id);
    const walked: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res = await api(
        'GET',
        `/instances/${ins}/deliveries?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(res.status, 200);
      walked.push(...res.body.deliveries.map((d: any) => d.delivery_id));
      sizes.push(res.body.deliveries.length);
      cursor = res.body.next_cursor;
    }
    assert.deepEqual(sizes, [3, 3, 1]);
    assert.deepEqual(walked, all);
    assert.equal(new Set(walked).size, 7);
  });

  test("another instance's delivery is not found", async (t) => {
    const [mine, other] = [await h.createInstance(), await h.createInstance()];
    await hook(t, other);
    await publish(other);
    const [theirs] = await settled(other);
    for (const path of [`${theirs.delivery_id}`, 'dlv_0000000000000000unknown']) {
      const res = await api('GET', `/instances/${mine}/deliveries/${path}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    }
    assert.deepEqual(await list(mine), []);
  });
});

test('detail: the exact request body and every attempt', async (t) => {
  const ins = await h.createInstance();
  const { r } = await hook(t, ins);
  const big = 'é'.repeat(3000); // 6000 bytes of UTF-8
  const answers: Answer[] = ['reset', { status: 503, body: big }, { status: 201, body: 'thanks' }];
  r.answer = (_req, n) => answers[n];
  await publish(ins, 'Grüße 👋');
  const [d] = await settled(ins);
  const got = await detail(ins, d.delivery_id);

  assert.deepEqual(
    Object.keys(got).sort(),
    [...DELIVERY_FIELDS, 'attempts', 'media_failure', 'request_body'].sort(),
  );
  assert.equal(got.media_failure, null, 'no engine media');
  for (const x of r.received) assert.ok(Buffer.from(got.request_body).equals(x.rawBody));
  assert.equal(got.status, 'delivered');
  assert.equal(got.last_status_code, 201);
  const kept = Buffer.from(big).subarray(0, 4096).toString('utf8');
  const expected = [
    { status_code: null, error: 'connection_reset', response_body: null, next_attempt_reason: 'schedule' },
    { status_code: 503, error: null, response_body: kept, next_attempt_reason: 'schedule' },
    { status_code: 201, error: null, response_body: 'thanks', next_attempt_reason: null },
  ];
  assert.equal(got.attempts.length, 3);
  assert.equal(got.attempt_count, 3, 'the detail counts its attempts as the list does');
  got.attempts.forEach((a: any, i: number) => {
    const { started_at, duration_ms, next_attempt_at, ...rest } = a;
    assert.deepEqual(rest, { attempt: i + 1, trigger: 'scheduled', note: null, ...expected[i] });
    assert.match(started_at, ISO);
    assert.ok(Number.isInteger(duration_ms) && duration_ms >= 0);
    // The schedule (0.05 s here) counts from the end of the failed attempt.
    const end = Date.parse(started_at) + duration_ms;
    assert.equal(next_attempt_at, i < 2 ? new Date(end + 50).toISOString() : null);
  });
});

describe('redeliver one', () => {
  /** A webhook whose receiver fails until its delivery is failed; then answers 200. */
  async function failedDelivery(t: TestContext) {
    const ins = await h.createInstance();
    const w = await hook(t, ins, { status: 500 });
    const event_id = await publish(ins);
    const [d] = await settled(ins);
    assert.deepEqual([d.status, d.attempt_count, d.failure_reason], ['failed', 6, 'attempts_exhausted']);
    w.r.answer = () => ({ status: 200 });
    return { ins, ...w, event_id, d };
  }
  const redeliver = (ins: string, id: string) => api('POST', `/instances/${ins}/deliveries/${id}/redeliver`);

  test('a failed delivery goes out again: same event and bytes, a manual attempt, the log kept', async (t) => {
    const { ins, r, event_id, d } = await failedDelivery(t);
    const res = await redeliver(ins, d.delivery_id);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.success, true);
    assert.deepEqual(Object.keys(res.body.delivery).sort(), [...DELIVERY_FIELDS].sort());
    assert.deepEqual(
      [res.body.delivery.delivery_id, res.body.delivery.status, res.body.delivery.failure_reason],
      [d.delivery_id, 'pending', null],
    );
    const [done] = await settled(ins);
    assert.deepEqual([done.status, done.attempt_count, done.last_status_code], ['delivered', 7, 200]);
    assert.equal(r.received.length, 7);
    for (const x of r.received) {
      assert.equal(x.body.event_id, event_id);
      assert.ok(x.rawBody.equals(r.received[0].rawBody));
    }
    const { attempts } = await detail(ins, d.delivery_id);
    assert.deepEqual(
      attempts.map((a: any) => [a.attempt, a.trigger, a.status_code]),
      [1, 2, 3, 4, 5, 6].map((n) => [n, 'scheduled', 500]).concat([[7, 'manual', 200]]),
    );
  });

  test('only a failed delivery of an enabled webhook; unknown is a 404', async (t) => {
    const ins = await h.createInstance();
    const slow = await hook(t, ins, { status: 429, headers: { 'retry-after': '3600' } });
    const fine = await hook(t, ins);
    await publish(ins);
    const ds = await eventually(async () => {
      const all = await list(ins);
      return all.every((x) => x.attempt_count === 1) ? all : undefined;
    });
    const of = (w: { id: string }) => ds.find((x) => x.webhook_id === w.id).delivery_id;
    const cases: [string, string][] = [
      [of(slow), 'pending'],
      [of(fine), 'delivered'],
    ];
    for (const [id, state] of cases) {
      const res = await redeliver(ins, id);
      assert.equal(res.status, 409, state);
      assert.equal(res.body.error.code, 'conflict');
      assert.match(res.body.error.message, new RegExp(`${state}.*only failed`));
    }
    const unknown = await redeliver(ins, 'dlv_0000000000000000unknown');
    assert.equal(unknown.status, 404);

    const failed = await failedDelivery(t);
    await setEnabled(failed.ins, failed.id, false);
    const res = await redeliver(failed.ins, failed.d.delivery_id);
    assert.equal(res.status, 409);
    assert.match(res.body.error.message, /disabled/);
    assert.equal(failed.r.received.length, 6);
  });
});

test('bulk redeliver: failed deliveries of enabled webhooks in range', async (t) => {
  const ins = await h.createInstance();
  const a = await hook(t, ins, { status: 500 });
  const b = await hook(t, ins, { status: 500 });
  await hook(t, ins); // delivered: never counted
  const e1 = await publish(ins, 'first');
  await settled(ins);
  const e2 = await publish(ins, 'second');
  const all = await settled(ins);
  const second = all.find((d) => d.event_id === e2).created_at;
  await setEnabled(ins, b.id, false);
  a.r.answer = () => ({ status: 200 });

  const bulk = (body: Record<string, unknown>) => api('POST', `/instances/${ins}/deliveries/redeliver`, body);
  const refused: [Record<string, unknown>, number][] = [
    [{ webhook_id: b.id }, 409],
    [{ webhook_id: 'whk_0000000000000000unknown' }, 404],
    [{ since: 'yesterday' }, 400],
    [{ until: '2026-13-01T00:00:00Z' }, 400],
  ];
  for (const [body, status] of refused) {
    assert.equal((await bulk(body)).status, status, JSON.stringify(body));
  }
  const steps: [Record<string, unknown>, number, string[]][] = [
    [{ since: second }, 1, [e2]],
    // RFC 3339 forms Date.parse alone cannot read: a leap second here, an hour-only offset below.
    [{ webhook_id: a.id, since: '2016-12-31T23:59:60Z', until: second }, 1, [e1, e2]],
    [{}, 0, [e1, e2]],
  ];
  for (const [body, n, got] of steps) {
    const res = await bulk(body);
    assert.deepEqual([res.status, res.body], [202, { success: true, redelivered: n }], JSON.stringify(body));
    await settled(ins);
    assert.deepEqual(
      a.r.received
        .slice(12)
        .map((x) => x.body.event_id)
        .sort(),
      got.sort(),
    );
  }
  assert.equal(b.r.received.length, 12);

  // Enabled again, B's failed deliveries get a fresh cycle of 6 attempts, the first one manual.
  await setEnabled(ins, b.id, true);
  assert.deepEqual((await bulk({ webhook_id: b.id, until: '2999-01-01T00:00:00+02' })).body, {
    success: true,
    redelivered: 2,
  });
  const again = (await settled(ins)).filter((d) => d.webhook_id === b.id);
  assert.deepEqual(
    again.map((d) => [d.status, d.attempt_count, d.failure_reason]),
    [0, 1].map(() => ['failed', 12, 'attempts_exhausted']),
  );
  assert.equal(b.r.received.length, 24);
  const triggers = (await detail(ins, again[0].delivery_id)).attempts.map((x: any) => x.trigger);
  assert.deepEqual(triggers, [...Array(6).fill('scheduled'), 'manual', ...Array(5).fill('scheduled')]);
});

describe('deleting a webhook', () => {
  test('cancels its pending deliveries and removes its log (SPEC §6)', async (t) => {
    const ins = await h.createInstance();
    const { r, id } = await hook(t, ins, { status: 500 });
    await publish(ins);
    await r.waitFor(2);
    assert.equal((await api('DELETE', `/instances/${ins}/webhooks/${id}`)).status, 200);
    const sent = r.received.length;
    assert.deepEqual(await list(ins), []);
    // The whole remaining schedule (4 × 50 ms) fits in this wait: a retry still queued would have arrived by now.
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.ok(r.received.length <= sent + 1, 'at most the attempt in flight at the delete');
    assert.ok(r.received.length < 6, 'the schedule did not run on');
  });
});
