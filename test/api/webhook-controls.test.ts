/**
 * Webhook controls against real receivers: a payload filter at routing, the webhook's own headers, a rate limit
 * that paces without failing, secret rotation with both signatures during the grace, and health kept by the
 * outcomes. A webhook without them is untouched (the rest of the suite holds it to the seed's rules).
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { verify } from '../../packages/receiver/src/index.ts';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Answer, TestReceiver } from '../support/receiver.ts';

/** The clock of the Herald under test: real time plus a skew a test may add (a rotation's grace passing). */
let skew = 0;
const clock = () => Date.now() + skew;

let h: TestHerald;
before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2' }, { clock });
});
after(() => h.close());

async function hook(
  t: TestContext,
  ins: string,
  config: Record<string, unknown>,
  answer?: TestReceiver['answer'],
) {
  const r = await TestReceiver.start();
  if (answer) r.answer = answer;
  t.after(() => r.close());
  const id = await h.createWebhook(ins, {
    destination_url: r.url,
    events: ['message', 'message.ack'],
    ...config,
  });
  return { r, id };
}
const message = (payload: Record<string, unknown>) => ({
  event: 'message',
  payload: messagePayload(payload),
});
const webhookOf = async (ins: string, id: string) =>
  (await h.request('GET', `/instances/${ins}/webhooks/${id}`)).body.webhook;

describe('filter', () => {
  test('an event the filter excludes gets no delivery, and deliveries counts only matches', async (t) => {
    const ins = await h.createInstance();
    const filter = {
      'payload.from': { $prefix: '49' },
      'payload.fromMe': false,
      $or: [{ event: 'message' }, { event: 'message.ack' }],
    };
    const { r, id } = await hook(t, ins, { filter });
    const all = await hook(t, ins, {});
    assert.deepEqual((await webhookOf(ins, id)).filter, filter);
    const german = await h.publish(ins, message({ id: 'm1', from: '491701234567@c.us' }));
    const other = await h.publish(
      ins,
      message({ id: 'm2', from: '15557654321@c.us', from_phone: '15557654321' }),
    );
    assert.deepEqual([german.body.deliveries, other.body.deliveries], [2, 1]);
    await all.r.waitFor(2);
    await eventually(async () => (r.received.length === 1 ? true : undefined));
    assert.equal(r.received[0].body.payload.id, 'm1');
  });

  test('a malformed filter is a 400 naming the key and the rule', async () => {
    const ins = await h.createInstance();
    const res = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: {
        destination_url: 'http://127.0.0.1:9/x',
        events: ['message'],
        filter: { event: { $regex: 'm' } },
      },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details[0].field, 'filter.event');
    assert.match(
      res.body.error.message,
      /^filter\.event: has "\$regex", which is not an operator; operators: \$eq/,
    );
  });
});

describe('headers', () => {
  test('sent with every attempt, never over Herald’s own; every view shows the names with values ****', async (t) => {
    const ins = await h.createInstance();
    // café is Latin-1, as HTTP sends header values: it reaches the receiver as written.
    const headers = { Authorization: 'Bearer rcv_123', 'X-Tenant': 'acme', 'X-Name': 'café' };
    const { r, id } = await hook(t, ins, { headers }, (_req, n) =>
      n === 0 ? { status: 500 } : { status: 200 },
    );
    const masked = { Authorization: '****', 'X-Tenant': '****', 'X-Name': '****' };
    const path = `/instances/${ins}/webhooks/${id}`;
    const answers = [
      (await h.request('GET', path)).body.webhook,
      (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks[0],
      (await h.request('POST', `${path}/enabled`, { body: { enabled: true } })).body.webhook,
      (await h.request('POST', `${path}/rotate-secret`, { body: { grace_s: 0 } })).body.webhook,
      (
        await h.request('PATCH', path, {
          body: { destination_url: r.url, events: ['message'], headers: masked },
        })
      ).body.webhook,
    ];
    for (const [i, view] of answers.entries()) assert.deepEqual(view.headers, masked, `answer ${i}`);
    await h.publish(ins, message({ id: 'h1' }));
    const attempts = await r.waitFor(2);
    for (const a of attempts) {
      assert.equal(a.headers.authorization, 'Bearer rcv_123', 'the value kept by **** given back');
      assert.equal(a.headers['x-tenant'], 'acme');
      assert.equal(a.headers['x-name'], 'café');
      assert.equal(a.headers['content-type'], 'application/json');
      assert.match(String(a.headers['x-service-event-id']), /^evt_/);
    }
  });

  test('a read-only portal link reads each header’s name, never its value', async () => {
    const ins = await h.createInstance();
    const id = await h.createWebhook(ins, {
      destination_url: 'http://127.0.0.1:9/x',
      events: ['message'],
      headers: { Authorization: 'Bearer rcv_for_the_receiver_only' },
    });
    const key = (await h.request('POST', `/instances/${ins}/keys`)).body.key;
    const made = await h.request('POST', `/instances/${ins}/portal-links`, {
      body: { read_only: true },
      key,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const token = new URL(made.body.url).hash.slice(1);
    for (const path of [`/instances/${ins}/webhooks`, `/instances/${ins}/webhooks/${id}`]) {
      const res = await h.request('GET', path, { key: token });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.ok(!JSON.stringify(res.body).includes('rcv_for_the_receiver_only'), path);
      assert.match(JSON.stringify(res.body), /"Authorization":"\*\*\*\*"/);
    }
  });

  test('**** keeps the saved value of the same header, whatever the case of its name; a new value replaces it', async (t) => {
    const ins = await h.createInstance();
    const { r, id } = await hook(t, ins, { headers: { 'X-Token': 'first', 'X-Other': 'o' } });
    const patch = (headers: Record<string, string>) =>
      h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
        body: { destination_url: r.url, events: ['message'], headers },
      });
    // The case changes, X-Other is dropped, and a new header comes beside the kept one.
    const kept = await patch({ 'x-token': '****', 'X-New': 'n' });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.deepEqual(kept.body.webhook.headers, { 'x-token': '****', 'X-New': '****' });
    await h.publish(ins, message({ id: 'k1' }));
    const [first] = await r.waitFor(1);
    assert.deepEqual(
      [first.headers['x-token'], first.headers['x-new'], first.headers['x-other']],
      ['first', 'n', undefined],
    );
    assert.equal((await patch({ 'X-Token': 'second' })).status, 200);
    await h.publish(ins, message({ id: 'k2' }));
    const [, second] = await r.waitFor(2);
    assert.equal(second.headers['x-token'], 'second');
  });

  test('**** for a header with no saved value is a 400 naming it, on create and on PATCH', async (t) => {
    const ins = await h.createInstance();
    const create = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'http://127.0.0.1:9/x', events: ['message'], headers: { 'X-Token': '****' } },
    });
    assert.equal(create.status, 400, JSON.stringify(create.body));
    assert.equal(create.body.error.details[0].field, 'headers.X-Token');
    assert.match(
      create.body.error.message,
      /^headers\.X-Token: is \*\*\*\*, .*no saved X-Token header: give its value/,
    );
    const { r, id } = await hook(t, ins, { headers: { 'X-Token': 'first' } });
    const res = await h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
      body: { destination_url: r.url, events: ['message'], headers: { 'X-Token': '****', 'X-Else': '****' } },
    });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(
      res.body.error.details.map((d: { field: string }) => d.field),
      ['headers.X-Else'],
    );
    await h.publish(ins, message({ id: 'n1' }));
    const [got] = await r.waitFor(1);
    assert.equal(got.headers['x-token'], 'first', 'the refused PATCH changed nothing');
  });

  test('names Herald sets, names the HTTP client refuses and control characters are a 400 naming the header', async () => {
    const ins = await h.createInstance();
    const table: [Record<string, string>, string, RegExp][] = [
      [{ 'X-Service-Signature': 'v1=forged' }, 'headers.X-Service-Signature', /set by Herald itself/],
      [{ Host: 'evil.example' }, 'headers.Host', /set by Herald itself/],
      [{ Expect: '100-continue' }, 'headers.Expect', /connection or a proxy/],
      [{ Upgrade: 'websocket' }, 'headers.Upgrade', /connection or a proxy/],
      [{ 'Keep-Alive': 'timeout=5' }, 'headers.Keep-Alive', /connection or a proxy/],
      [{ TE: 'trailers' }, 'headers.TE', /connection or a proxy/],
      [{ Trailer: 'X-A' }, 'headers.Trailer', /connection or a proxy/],
      [{ 'Proxy-Authorization': 'Basic eA==' }, 'headers.Proxy-Authorization', /connection or a proxy/],
      [{ 'proxy-anything': 'x' }, 'headers.proxy-anything', /connection or a proxy/],
      [{ 'X-Token': 'a\r\nX-Evil: 1' }, 'headers.X-Token', /control character/],
      [{ 'X-Token': 'a\tb' }, 'headers.X-Token', /control character/],
      [{ 'X-Token': 'a\u0000' }, 'headers.X-Token', /control character/],
      [{ 'X-Token': 'a\u007f' }, 'headers.X-Token', /control character/],
      [{ 'X-Token': 'a\u0085' }, 'headers.X-Token', /control character/],
      [{ 'X-Token': '5 €' }, 'headers.X-Token', /up to U\+00FF/],
    ];
    for (const [headers, field, rule] of table) {
      const res = await h.request('POST', `/instances/${ins}/webhooks`, {
        body: { destination_url: 'http://127.0.0.1:9/x', events: ['message'], headers },
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.details[0].field, field);
      assert.match(res.body.error.details[0].message, rule, field);
    }
  });

  test('PATCH replaces the configuration: controls left out are removed', async (t) => {
    const ins = await h.createInstance();
    const { r, id } = await hook(t, ins, {
      headers: { 'X-A': '1' },
      rate_limit: { per_second: 3 },
      filter: { event: 'message' },
    });
    const res = await h.request('PATCH', `/instances/${ins}/webhooks/${id}`, {
      body: { destination_url: r.url, events: ['message'] },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      [res.body.webhook.headers, res.body.webhook.rate_limit, res.body.webhook.filter],
      [null, null, null],
    );
  });
});

describe('rate limit', () => {
  test('a bad per_second is a 400 that says what is wrong inside rate_limit', async () => {
    const ins = await h.createInstance();
    for (const [rateLimit, message] of [
      [{ per_second: 0 }, 'rate_limit.per_second: must be at least 1'],
      [{ per_second: 10_001 }, 'rate_limit.per_second: must be at most 10000'],
      [{ per_second: 'fast' }, 'rate_limit.per_second: must be an integer'],
      [{}, 'rate_limit.per_second: is required'],
      [5, 'rate_limit: must be an object or null'],
    ] as const) {
      const res = await h.request('POST', `/instances/${ins}/webhooks`, {
        body: { destination_url: 'http://127.0.0.1:9/x', events: ['message'], rate_limit: rateLimit },
      });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      const [detail] = res.body.error.details;
      assert.equal(`${detail.field}: ${detail.message}`, message, JSON.stringify(rateLimit));
    }
  });

  test('15 deliveries at 5 per second spread over about 3 s, each in one attempt, while another webhook is not slowed', async (t) => {
    const ins = await h.createInstance();
    const limited = await hook(t, ins, { rate_limit: { per_second: 5 }, events: ['message'] });
    const free = await hook(t, ins, { events: ['message'] });
    const events = Array.from({ length: 15 }, (_, i) => message({ id: `r${i}` }));
    const started = Date.now();
    assert.equal(
      (await h.request('POST', `/instances/${ins}/events/batch`, { body: { events } })).status,
      202,
    );
    const fast = await free.r.waitFor(15);
    const paced = await limited.r.waitFor(15, 10_000);
    const spread = paced[14].at - paced[0].at;
    assert.ok(spread >= 2500 && spread < 4500, `15 at 5/s arrived over ${spread} ms`);
    // At most 5 starts in any second: five intervals always span most of a second (arrivals jitter a little).
    for (let i = 5; i < 15; i++) {
      assert.ok(
        paced[i].at - paced[i - 5].at >= 850,
        `arrivals ${i - 5}..${i}: ${paced[i].at - paced[i - 5].at} ms`,
      );
    }
    assert.ok(fast[14].at - started < 1500, `the other webhook took ${fast[14].at - started} ms`);
    const list = await eventually(async () => {
      const page = (await h.request('GET', `/instances/${ins}/deliveries?webhook_id=${limited.id}&limit=50`))
        .body;
      return page.deliveries.every((d: { status: string }) => d.status !== 'pending') ? page : undefined;
    });
    assert.deepEqual(
      list.deliveries.map((d: { status: string; attempt_count: number }) => [d.status, d.attempt_count]),
      Array(15).fill(['delivered', 1]),
      'waiting for the limit is no attempt and no failure',
    );
  });
});

describe('secret rotation', () => {
  test('both signatures during the grace, new first; only the new one after it; the new secret shown once', async (t) => {
    const ins = await h.createInstance();
    const { r, id } = await hook(t, ins, { client_sign_secret: 'whsec_old', events: ['message'] });
    const rotated = await h.request('POST', `/instances/${ins}/webhooks/${id}/rotate-secret`, {
      body: { grace_s: 60 },
    });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const secret: string = rotated.body.client_sign_secret;
    assert.match(secret, /^whsec_/);
    assert.match(rotated.body.webhook.previous_secret_until, /Z$/);
    assert.equal(JSON.stringify(await webhookOf(ins, id)).includes(secret), false, 'never shown again');

    await h.publish(ins, message({ id: 'during' }));
    const [during] = await r.waitFor(1);
    const signatures = String(during.headers['x-service-signature']).split(' ');
    assert.equal(signatures.length, 2);
    for (const s of [secret, 'whsec_old']) {
      const ok = verify({ secret: s, headers: during.headers, rawBody: during.rawBody, now: clock });
      assert.equal(ok.ok, true, `verified with ${s}`);
    }
    const onlyNew = { ...during.headers, 'x-service-signature': signatures[0] };
    assert.equal(
      verify({ secret, headers: onlyNew, rawBody: during.rawBody, now: clock }).ok,
      true,
      'new first',
    );

    skew += 61_000; // the grace ends
    await h.publish(ins, message({ id: 'after' }));
    const [, later] = await r.waitFor(2);
    assert.equal(String(later.headers['x-service-signature']).split(' ').length, 1);
    assert.equal(verify({ secret, headers: later.headers, rawBody: later.rawBody, now: clock }).ok, true);
    assert.equal(
      verify({ secret: 'whsec_old', headers: later.headers, rawBody: later.rawBody, now: clock }).ok,
      false,
    );
    assert.equal((await webhookOf(ins, id)).previous_secret_until, null);
  });

  test('a given secret and no grace: the old one is forgotten at once; bad input is a 400', async (t) => {
    const ins = await h.createInstance();
    const { id } = await hook(t, ins, { client_sign_secret: 'whsec_a' });
    const res = await h.request('POST', `/instances/${ins}/webhooks/${id}/rotate-secret`, {
      body: { client_sign_secret: 'whsec_b', grace_s: 0 },
    });
    assert.deepEqual(
      [res.body.client_sign_secret, res.body.webhook.previous_secret_until],
      ['whsec_b', null],
    );
    for (const body of [{ grace_s: 604_801 }, { grace_s: -1 }, { client_sign_secret: '' }, { secret: 'x' }]) {
      const bad = await h.request('POST', `/instances/${ins}/webhooks/${id}/rotate-secret`, { body });
      assert.equal(bad.status, 400, JSON.stringify(body));
    }
  });
});

describe('health', () => {
  test('after a mix of 2xx and 5xx: attempts, deliveries, the last of each and the failures in a row', async (t) => {
    const ins = await h.createInstance();
    // Two deliveries: the first answered 500 twice then 200, the second 500 from then on (until it is looked at).
    const answers: Answer[] = [{ status: 500 }, { status: 500 }, { status: 200 }];
    const { r, id } = await hook(t, ins, { events: ['message'] }, (_req, n) => answers[n] ?? { status: 503 });
    await h.publish(ins, message({ id: 'first' }));
    await r.waitFor(3);
    await h.publish(ins, message({ id: 'second' }));
    await r.waitFor(5);
    const health = await eventually(async () => {
      const w = await webhookOf(ins, id);
      return w.health.attempts_24h >= 5 ? w.health : undefined;
    });
    assert.equal(health.delivered_24h, 1);
    assert.ok(health.retried_24h >= 3, `${health.retried_24h} failed attempts followed by another`);
    assert.ok(health.consecutive_failures >= 2, `${health.consecutive_failures} failures in a row`);
    assert.ok(Date.parse(health.last_failed_at) > Date.parse(health.last_delivered_at));
    assert.equal(r.received[2].body.payload.id, 'first');
  });

  test('a webhook with no attempt yet has empty health', async (t) => {
    const ins = await h.createInstance();
    const { id } = await hook(t, ins, {});
    assert.deepEqual((await webhookOf(ins, id)).health, {
      last_delivered_at: null,
      last_failed_at: null,
      consecutive_failures: 0,
      attempts_24h: 0,
      delivered_24h: 0,
      failed_24h: 0,
      retried_24h: 0,
    });
  });
});
