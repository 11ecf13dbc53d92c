/**
 * Abuse limits: per-key rate limits with 429 + Retry-After (the portal links of an instance sharing one budget), and
 * the cap on webhooks per instance.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';

let now = 1_800_000_000_000;
const clock = () => now;

describe('per-key rate limits', () => {
  let h: TestHerald;
  let ins: string;
  let key: string;
  before(async () => {
    h = await startTestHerald({ RATE_LIMIT_MANAGEMENT: '2', RATE_LIMIT_INGEST: '3' }, { clock });
    ins = await h.createInstance('limits'); // 1 of the admin key's 4 management tokens
    key = (await h.request('POST', `/instances/${ins}/keys`)).body.key; // 2 of 4
  });
  after(() => h.close());

  it('a key beyond its management budget gets 429 rate_limited with Retry-After; others are unaffected', async () => {
    now += 10_000; // all buckets full again: 2/s, two seconds' worth = 4
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.request('GET', '/instances')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    const r = await h.request('GET', `/instances/${ins}/webhooks`);
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '1');
    assert.deepEqual(r.body, {
      success: false,
      error: {
        code: 'rate_limited',
        message: 'rate limit: this key may make 2 management requests per second; retry later',
        details: [],
      },
    });
    // The instance key has a budget of its own; ingest has a budget of its own too.
    assert.equal((await h.request('GET', `/instances/${ins}/webhooks`, { key })).status, 200);
    const published = await h.publish(ins, { event: 'message', payload: messagePayload() });
    assert.equal(published.status, 202);
    // Half a second later one token has flowed back.
    now += 500;
    assert.equal((await h.request('GET', '/instances')).status, 200);
    assert.equal((await h.request('GET', '/instances')).status, 429);
  });

  it('ingest has its own budget per key, single and batch alike', async () => {
    now += 10_000;
    const statuses = [];
    for (let i = 0; i < 7; i++) {
      const r =
        i % 2
          ? await h.request('POST', `/instances/${ins}/events/batch`, {
              key,
              body: { events: [{ event: 'message', payload: messagePayload() }] },
            })
          : await h.request('POST', `/instances/${ins}/events`, {
              key,
              body: { event: 'message', payload: messagePayload() },
            });
      statuses.push(r.status);
    }
    assert.deepEqual(statuses, [202, 202, 202, 202, 202, 202, 429]);
    // Management with the same key still passes.
    assert.equal((await h.request('GET', `/instances/${ins}`, { key })).status, 200);
  });

  it('a refused request stores nothing', async () => {
    now += 10_000;
    const r = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'https://93.184.215.14/', events: ['message'] },
    });
    assert.equal(r.status, 201);
    for (let i = 0; i < 3; i++) await h.request('GET', '/instances');
    const refused = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'https://93.184.215.15/', events: ['message'] },
    });
    assert.equal(refused.status, 429);
    now += 10_000;
    const { webhooks } = (await h.request('GET', `/instances/${ins}/webhooks`)).body;
    assert.deepEqual(
      webhooks.map((w: { destination_url: string }) => w.destination_url),
      ['https://93.184.215.14/'],
    );
  });

  it("an instance's portal links share one budget: more links buy no more requests; its keys keep their own", async () => {
    now += 10_000;
    const token = async () => {
      now += 1000; // two of the key's tokens back for each link made
      const made = await h.request('POST', `/instances/${ins}/portal-links`, { key, body: {} });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      return new URL(made.body.url).hash.slice(1);
    };
    const links = [await token(), await token(), await token(), await token(), await token()];
    now += 10_000; // the links' bucket and the key's full again (making links drew on the key's)
    // Four requests' worth, two seconds at 2/s, for all five links together: the fifth link's first is refused.
    const statuses = [];
    for (const link of links)
      statuses.push((await h.request('GET', `/instances/${ins}/webhooks`, { key: link })).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 429]);
    const refused = await h.request('GET', `/instances/${ins}/deliveries`, { key: links[0] });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '1');
    // The instance's key is not held back by its links, nor are another instance's links.
    assert.equal((await h.request('GET', `/instances/${ins}/webhooks`, { key })).status, 200);
    const other = await h.createInstance('another');
    const otherLink = await h.request('POST', `/instances/${other}/portal-links`, { body: {} });
    assert.equal(
      (await h.request('GET', `/instances/${other}`, { key: new URL(otherLink.body.url).hash.slice(1) }))
        .status,
      200,
    );
  });

  it('health checks are never limited, and a missing key is a 401 before any limit', async () => {
    for (let i = 0; i < 10; i++)
      assert.equal((await h.request('GET', '/healthz', { key: null })).status, 200);
    for (let i = 0; i < 10; i++)
      assert.equal((await h.request('GET', '/instances', { key: null })).status, 401);
  });
});

describe('the cap on webhooks per instance', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({ MAX_WEBHOOKS_PER_INSTANCE: '2' });
  });
  after(() => h.close());

  it('refuses the webhook beyond the cap with 409 naming the rule, per instance', async () => {
    const [a, b] = [await h.createInstance('a'), await h.createInstance('b')];
    const hook = { destination_url: 'http://127.0.0.1:9/hook', events: ['message'] };
    const create = (ins: string) => h.request('POST', `/instances/${ins}/webhooks`, { body: hook });
    assert.equal((await create(a)).status, 201);
    const second = await create(a);
    assert.equal(second.status, 201);
    const third = await create(a);
    assert.equal(third.status, 409);
    assert.equal(third.body.error.code, 'conflict');
    assert.equal(
      third.body.error.message,
      'webhooks: an instance may have at most 2 webhooks (MAX_WEBHOOKS_PER_INSTANCE); delete one first',
    );
    assert.equal((await create(b)).status, 201, 'another instance has its own count');
    assert.equal(
      (await h.request('DELETE', `/instances/${a}/webhooks/${second.body.webhook_id}`)).status,
      200,
    );
    assert.equal((await create(a)).status, 201, 'room again after a delete');
    assert.equal((await h.request('GET', `/instances/${a}/webhooks`)).body.webhooks.length, 2);
  });
});

describe('the cap on webhooks per instance, under creates at once', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({ MAX_WEBHOOKS_PER_INSTANCE: '10' });
  });
  after(() => h.close());

  it('30 creates at once: exactly 10 are created, the other 20 get the 409 naming the rule', async () => {
    const ins = await h.createInstance('race');
    const hook = { destination_url: 'http://127.0.0.1:9/hook', events: ['message'] };
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => h.request('POST', `/instances/${ins}/webhooks`, { body: hook })),
    );
    const refused = replies.filter((r) => r.status === 409);
    assert.equal(replies.filter((r) => r.status === 201).length, 10);
    assert.equal(refused.length, 20);
    for (const r of refused)
      assert.match(r.body.error.message, /at most 10 webhooks \(MAX_WEBHOOKS_PER_INSTANCE\)/);
    assert.equal((await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks.length, 10);
  });
});
