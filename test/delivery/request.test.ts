/** The delivery request on the wire: seed §2.2, §4.1, §5.1, SPEC §8. Checked byte-exact at a real receiver. */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { verify } from '../../packages/receiver/src/verify.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import type { Received } from '../support/receiver.ts';
import { delivery, getWebhook, hook, publish, settled } from './helpers.ts';

const SECRET = 'whsec_test-secret-ü-0123456789';

/** The signature computed independently of src/: 'v1=' + hex HMAC-SHA256 of `${ts}.${rawBody}`. */
function expectedSignature(secret: string, req: Received): string {
  const ts = req.headers['x-service-timestamp'] as string;
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(Buffer.concat([Buffer.from(`${ts}.`, 'ascii'), req.rawBody]));
  return `v1=${mac.digest('hex')}`;
}

/** Asserts the request carries a valid v1 signature for `secret`, by both verifiers. */
function assertSigned(req: Received, secret: string): void {
  const header = req.headers['x-service-signature'];
  assert.match(String(header), /^v1=[0-9a-f]{64}$/);
  assert.equal(header, expectedSignature(secret, req));
  const result = verify({ secret, headers: req.headers, rawBody: req.rawBody });
  assert.ok(result.ok, JSON.stringify(result));
  assert.equal(result.eventId, req.headers['x-service-event-id']);
}

/** Event id and timestamp headers that every delivery carries, signed or not. */
function assertCommonHeaders(req: Received, eventId: string): void {
  assert.equal(req.headers['content-type'], 'application/json');
  assert.match(String(req.headers['user-agent']), /^Herald\/\d+\.\d+\.\d+/);
  assert.equal(req.headers['x-service-event-id'], eventId);
  const ts = String(req.headers['x-service-timestamp']);
  assert.match(ts, /^\d+$/, 'integer seconds');
  assert.ok(Math.abs(Number(ts) - req.at / 1000) <= 5, `timestamp ${ts} is not within 5 s of ${req.at}`);
}

describe('delivery request', () => {
  let h: TestHerald;
  before(async () => {
    // A retry step just over 1 s, so that the second attempt falls into a later second than the first.
    h = await startTestHerald({ RETRY_SCHEDULE: '1.1,1.1,1.1,1.1,1.1' });
  });
  after(() => h.close());

  test('a signed delivery: headers, body shape and a signature both verifiers accept', async () => {
    const { instanceId, receiver } = await hook(h, { client_sign_secret: SECRET });
    try {
      const eventId = await publish(h, instanceId, { body: 'Grüße 👋 "quoted" \\ \n' });
      const [req] = await receiver.waitFor(1);
      assertCommonHeaders(req, eventId);
      assertSigned(req, SECRET);
      assert.equal(verify({ secret: 'wrong-secret', headers: req.headers, rawBody: req.rawBody }).ok, false);
      const body = JSON.parse(req.rawBody.toString('utf8'));
      assert.deepEqual(Object.keys(body).sort(), [
        'event',
        'event_id',
        'instance_id',
        'payload',
        'timestamp',
      ]);
      assert.equal(body.event_id, eventId);
      assert.equal(body.event, 'message');
      assert.equal(body.instance_id, instanceId);
      assert.ok(
        Number.isInteger(body.timestamp) && Math.abs(body.timestamp - req.at) < 5000,
        'timestamp in ms',
      );
      assert.equal(body.payload.body, 'Grüße 👋 "quoted" \\ \n');
    } finally {
      await receiver.close();
    }
  });

  test('without a secret: no signature header, event id and timestamp still sent', async () => {
    const { instanceId, receiver } = await hook(h);
    try {
      const eventId = await publish(h, instanceId);
      const [req] = await receiver.waitFor(1);
      assertCommonHeaders(req, eventId);
      assert.equal(req.headers['x-service-signature'], undefined);
    } finally {
      await receiver.close();
    }
  });

  test('a retry sends the same body bytes with its own timestamp and signature', async () => {
    const { instanceId, webhookId, receiver } = await hook(h, { client_sign_secret: SECRET });
    receiver.answer = (_req, n) => ({ status: n === 0 ? 503 : 200 });
    try {
      const eventId = await publish(h, instanceId);
      const [first, second] = await receiver.waitFor(2);
      for (const req of [first, second]) {
        assertCommonHeaders(req, eventId);
        assertSigned(req, SECRET);
      }
      assert.ok(first.rawBody.equals(second.rawBody), 'body bytes differ between attempts');
      assert.ok(
        Number(second.headers['x-service-timestamp']) > Number(first.headers['x-service-timestamp']),
        'the timestamp is the time of each attempt',
      );
      assert.notEqual(first.headers['x-service-signature'], second.headers['x-service-signature']);
      const d = await settled(h, instanceId, webhookId, eventId);
      assert.equal(d.status, 'delivered');
      assert.equal(d.request_body, first.rawBody.toString('utf8'), 'the logged body is the bytes sent');
    } finally {
      await receiver.close();
    }
  });

  test('PATCH: an empty secret keeps it, a new one replaces it, clear_client_sign removes it', async () => {
    const { instanceId, webhookId, receiver } = await hook(h, { client_sign_secret: SECRET });
    const path = `/instances/${instanceId}/webhooks/${webhookId}`;
    const config = { destination_url: receiver.url, events: ['message'] };
    /** Publishes one event and returns the request that delivered it. */
    const deliverOne = async () => {
      // Counted before publishing: the delivery may arrive before the 202 does.
      const expected = receiver.received.length + 1;
      const eventId = await publish(h, instanceId);
      const all = await receiver.waitFor(expected);
      const req = all[all.length - 1];
      assert.equal(req.headers['x-service-event-id'], eventId);
      assert.equal((await delivery(h, instanceId, webhookId, eventId)).event_id, eventId);
      return req;
    };
    const patch = async (body: Record<string, unknown>) => {
      const r = await h.request('PATCH', path, { body: { ...config, ...body } });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.webhook;
    };
    try {
      assert.equal((await patch({ client_sign_secret: '' })).client_sign_secret_set, true);
      assertSigned(await deliverOne(), SECRET);

      assert.equal((await patch({})).client_sign_secret_set, true, 'an omitted secret keeps it too');
      assertSigned(await deliverOne(), SECRET);

      await patch({ client_sign_secret: 'rotated-secret' });
      const rotated = await deliverOne();
      assertSigned(rotated, 'rotated-secret');
      assert.equal(verify({ secret: SECRET, headers: rotated.headers, rawBody: rotated.rawBody }).ok, false);

      assert.equal((await patch({ clear_client_sign: true })).client_sign_secret_set, false);
      assert.equal((await getWebhook(h, instanceId, webhookId)).enabled, true, 'PATCH never changes enabled');
      const unsigned = await deliverOne();
      assert.equal(unsigned.headers['x-service-signature'], undefined);
      assert.ok(unsigned.headers['x-service-timestamp']);
    } finally {
      await receiver.close();
    }
  });
});
