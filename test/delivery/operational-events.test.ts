/**
 * Operational events with real receivers: what Herald says about its own deliveries (webhook.disabled, .failing,
 * .recovered, delivery.failed) reaches the instance's webhooks that name them, never the webhook they are about nor
 * one subscribed to `*`, and the operator's destination (OPERATOR_WEBHOOK_URL), signed with its own secret. Run on
 * SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { verify } from '../../packages/receiver/src/index.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Received, TestReceiver } from '../support/receiver.ts';

const OPERATOR_SECRET = 'operator-secret-0123456789';
const OPS = ['webhook.disabled', 'webhook.failing', 'webhook.recovered', 'delivery.failed'];

/** The Herald's clock: real time plus a skew a test adds (a webhook failing for an hour). */
let skew = 0;
const clock = () => Date.now() + skew;
let h: TestHerald;
let operator: TestReceiver;

before(async () => {
  operator = await TestReceiver.start('/operator');
  h = await startTestHerald(
    {
      RETRY_SCHEDULE: '0.02,0.02,0.02,0.02,0.02',
      OPERATOR_WEBHOOK_URL: operator.url,
      OPERATOR_WEBHOOK_SECRET: OPERATOR_SECRET,
      DISABLE_AFTER_FAILING_S: '3600',
    },
    { clock },
  );
});
after(async () => {
  await h.close();
  await operator.close();
});

/** An instance with a webhook under watch (answering as `answer` says), a sibling naming the operational kinds, and one on `*`. */
async function scene(t: TestContext, answer: TestReceiver['answer']) {
  const ins = await h.createInstance();
  const [watched, sibling, star] = await Promise.all([
    TestReceiver.start(),
    TestReceiver.start(),
    TestReceiver.start(),
  ]);
  t.after(() => Promise.all([watched.close(), sibling.close(), star.close()]));
  watched.answer = answer;
  const watchedId = await h.createWebhook(ins, {
    destination_url: watched.url,
    // It names them too: what is said of it still never goes to it.
    events: ['message', ...OPS],
  });
  await h.createWebhook(ins, { destination_url: sibling.url, events: OPS });
  await h.createWebhook(ins, { destination_url: star.url, events: ['*'] });
  return { ins, watched, sibling, star, watchedId };
}

const publish = async (ins: string, id: string) => {
  const r = await h.publish(ins, { event: 'message', payload: messagePayload({ id }) });
  assert.equal(r.status, 202, JSON.stringify(r.body));
};

/** What a receiver got of one kind, about one instance. */
const got = (r: TestReceiver, kind: string, ins: string): Received[] =>
  r.received.filter((x) => x.body?.event === kind && x.body?.instance_id === ins);

/** Waits until `r` has `count` of `kind` about `ins`. */
const waitFor = (r: TestReceiver, kind: string, ins: string, count = 1) =>
  eventually(async () => (got(r, kind, ins).length >= count ? got(r, kind, ins) : undefined), 15_000);

/** The deliveries of the instance's log, as `key` (default: the admin's) sees it. */
async function log(ins: string, query = '', key?: string) {
  const r = await h.request('GET', `/instances/${ins}/deliveries?limit=200${query}`, { key });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.deliveries as { webhook_id: string; event: string; status: string; delivery_id: string }[];
}

describe('operational events', () => {
  test('a 410 disables the webhook: webhook.disabled (gone) and delivery.failed at a sibling and the operator, signed with its secret', async (t) => {
    const s = await scene(t, () => ({ status: 410 }));
    await publish(s.ins, 'gone-1');
    const [disabled] = await waitFor(s.sibling, 'webhook.disabled', s.ins);
    assert.deepEqual(
      { ...disabled.body.payload, disabled_at: typeof disabled.body.payload.disabled_at },
      {
        webhook_id: s.watchedId,
        destination_url: s.watched.url,
        reason: 'gone',
        disabled_at: 'string',
      },
    );
    const [failed] = await waitFor(s.sibling, 'delivery.failed', s.ins);
    assert.equal(failed.body.payload.webhook_id, s.watchedId);
    assert.equal(failed.body.payload.failure_reason, 'gone');
    assert.equal(failed.body.payload.last_status_code, 410);
    assert.equal(failed.body.payload.event, 'message');

    const [atOperator] = await waitFor(operator, 'webhook.disabled', s.ins);
    assert.equal(atOperator.body.event_id, disabled.body.event_id, 'one event, delivered to both');
    assert.equal(
      verify({ secret: OPERATOR_SECRET, headers: atOperator.headers, rawBody: atOperator.rawBody }).ok,
      true,
    );
    await waitFor(operator, 'delivery.failed', s.ins);

    // Not to the webhook it is about, nor by `*`: by then the sibling has had both, and the others nothing more.
    assert.deepEqual(
      s.watched.received.map((x) => x.body.event),
      ['message'],
    );
    assert.deepEqual(
      s.star.received.map((x) => x.body.event),
      ['message'],
      '`*` does not include operational events',
    );
    const webhook = await h.request('GET', `/instances/${s.ins}/webhooks/${s.watchedId}`);
    assert.equal(webhook.body.webhook.disabled_reason, 'gone');
  });

  test('20 failed attempts in a row make one webhook.failing; the next delivered attempt one webhook.recovered', async (t) => {
    let healthy = false;
    const s = await scene(t, () => ({ status: healthy ? 200 : 503 }));
    // Four deliveries of six attempts each: 24 failures in a row, one streak.
    for (const id of ['f-1', 'f-2', 'f-3', 'f-4']) await publish(s.ins, id);
    const failedOnes = await waitFor(s.sibling, 'delivery.failed', s.ins, 4);
    assert.deepEqual(
      failedOnes.map((x) => x.body.payload.failure_reason),
      ['attempts_exhausted', 'attempts_exhausted', 'attempts_exhausted', 'attempts_exhausted'],
    );
    const [failing] = got(s.sibling, 'webhook.failing', s.ins);
    assert.ok(failing, 'webhook.failing arrived');
    assert.ok(failing.body.payload.consecutive_failures >= 20, JSON.stringify(failing.body.payload));
    assert.equal(got(s.sibling, 'webhook.failing', s.ins).length, 1, 'once per streak');
    assert.equal(typeof failing.body.payload.failing_since, 'string');

    healthy = true;
    await publish(s.ins, 'well-again');
    const [recovered] = await waitFor(s.sibling, 'webhook.recovered', s.ins);
    assert.deepEqual(recovered.body.payload, {
      webhook_id: s.watchedId,
      destination_url: s.watched.url,
      after_failures: 24,
    });
    await waitFor(operator, 'webhook.recovered', s.ins);
    // A new streak may be announced again; this one was announced once, at the operator too.
    assert.equal(got(operator, 'webhook.failing', s.ins).length, 1);
  });

  test('DISABLE_AFTER_FAILING_S: a webhook whose attempts have all failed for that long is disabled (failing)', async (t) => {
    let held: (() => void) | null = null;
    const s = await scene(t, (_req, n) => {
      if (n === 0) return { status: 500 };
      // The second attempt waits until the clock has moved an hour on.
      return new Promise((resolve) => {
        held = () => resolve({ status: 500 });
      });
    });
    await publish(s.ins, 'slow-death');
    await eventually(async () => (held ? true : undefined));
    skew += 3_600_000;
    (held as unknown as () => void)();
    const [disabled] = await waitFor(s.sibling, 'webhook.disabled', s.ins);
    assert.equal(disabled.body.payload.reason, 'failing');
    const webhook = await h.request('GET', `/instances/${s.ins}/webhooks/${s.watchedId}`);
    assert.equal(webhook.body.webhook.enabled, false);
    assert.equal(webhook.body.webhook.disabled_reason, 'failing');
    // Its delivery was ended by the disable, which webhook.disabled reports: no delivery.failed for it.
    const [d] = await log(s.ins, `&webhook_id=${s.watchedId}`);
    assert.equal(d.status, 'failed');
    assert.equal(got(s.sibling, 'delivery.failed', s.ins).length, 0);
  });

  test('a webhook disabled by hand: webhook.disabled (manual), once, however often it is disabled', async (t) => {
    const s = await scene(t, () => ({ status: 200 }));
    for (let i = 0; i < 2; i++) {
      const r = await h.request('POST', `/instances/${s.ins}/webhooks/${s.watchedId}/enabled`, {
        body: { enabled: false },
      });
      assert.equal(r.status, 200);
    }
    const [disabled] = await waitFor(s.sibling, 'webhook.disabled', s.ins);
    assert.equal(disabled.body.payload.reason, 'manual');
    const all = await log(s.ins, '&event=webhook.disabled');
    assert.equal(all.filter((d) => d.webhook_id !== 'whk_operator').length, 1, 'one delivery to the sibling');
  });

  test("the operator's deliveries are in the instance's log for the admin alone", async (t) => {
    const s = await scene(t, () => ({ status: 410 }));
    await publish(s.ins, 'seen-by-whom');
    await waitFor(operator, 'delivery.failed', s.ins);
    const key = await h.request('POST', `/instances/${s.ins}/keys`, { body: {} });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    const admin = await log(s.ins);
    const operatorOnes = admin.filter((d) => d.webhook_id === 'whk_operator');
    assert.deepEqual(operatorOnes.map((d) => d.event).sort(), ['delivery.failed', 'webhook.disabled']);
    const mine = await log(s.ins, '', key.body.key);
    assert.equal(mine.length, admin.length - 2);
    assert.ok(mine.every((d) => d.webhook_id !== 'whk_operator'));
    const one = await h.request('GET', `/instances/${s.ins}/deliveries/${operatorOnes[0].delivery_id}`, {
      key: key.body.key,
    });
    assert.equal(one.status, 404);
    const redo = await h.request(
      'POST',
      `/instances/${s.ins}/deliveries/${operatorOnes[0].delivery_id}/redeliver`,
      { key: key.body.key },
    );
    assert.equal(redo.status, 404);
  });

  test('clients cannot publish them; a webhook names them beside `*`, and nothing else may be', async () => {
    const ins = await h.createInstance();
    const r = await h.publish(ins, {
      event: 'webhook.disabled',
      payload: {
        webhook_id: 'whk_x',
        destination_url: 'https://x',
        reason: 'gone',
        disabled_at: new Date().toISOString(),
      },
    });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.error.details, [
      {
        field: 'event',
        message:
          '"webhook.disabled" is sent by Herald itself, about its own deliveries, and cannot be published',
      },
    ]);
    const both = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'https://hooks.example.com/a', events: ['*', 'webhook.failing'] },
    });
    assert.equal(both.status, 201, JSON.stringify(both.body));
    const mixed = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'https://hooks.example.com/b', events: ['*', 'message'] },
    });
    assert.equal(mixed.status, 400);
    assert.equal(mixed.body.error.details[0].field, 'events');
  });
});
