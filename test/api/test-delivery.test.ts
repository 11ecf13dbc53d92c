import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { verify } from '../../packages/receiver/src/verify.ts';
import { samplePayload } from '../../src/domain/samples.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const SECRET = 'whsec_test_delivery';
let h: TestHerald;
let receiver: TestReceiver;
let other: TestReceiver;
let ins = '';
let whk = '';

before(async () => {
  h = await startTestHerald({ RETRY_SCHEDULE: '0.05,0.05' });
  receiver = await TestReceiver.start();
  other = await TestReceiver.start();
  ins = await h.createInstance('test-delivery');
  whk = await h.createWebhook(ins, {
    destination_url: receiver.url,
    events: ['message', 'session.status', 'message.unknown'],
    client_sign_secret: SECRET,
  });
  await h.createWebhook(ins, { destination_url: other.url, events: ['*'] });
});
after(async () => {
  await h.close();
  await receiver.close();
  await other.close();
});

const sendTest = (event: unknown, webhookId = whk) =>
  h.request('POST', `/instances/${ins}/webhooks/${webhookId}/test`, { body: { event } });

test('a test delivery sends the sample of that kind, signed, to that webhook only, and is logged', async () => {
  const r = await sendTest('message');
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.match(r.body.event_id, /^evt_/);
  assert.match(r.body.delivery_id, /^dlv_/);
  const [got] = await receiver.waitFor(1);
  assert.equal(got.body.event_id, r.body.event_id);
  assert.equal(got.body.event, 'message');
  assert.deepEqual(got.body.payload, samplePayload('message'));
  assert.equal(verify({ secret: SECRET, headers: got.headers, rawBody: got.rawBody }).ok, true);
  const detail = await eventually(async () => {
    const d = await h.request('GET', `/instances/${ins}/deliveries/${r.body.delivery_id}`);
    return d.body.delivery.status === 'delivered' ? d.body.delivery : undefined;
  });
  assert.equal(detail.attempts[0].status_code, 200);
  assert.equal(other.received.length, 0, 'the other webhook subscribed to * got nothing');
});

test('a failing endpoint gets the test delivery retried like any other', async () => {
  receiver.answer = (_req, n) => ({ status: n === 1 ? 503 : 200 });
  const r = await sendTest('message.unknown');
  const detail = await eventually(async () => {
    const d = await h.request('GET', `/instances/${ins}/deliveries/${r.body.delivery_id}`);
    return d.body.delivery.status === 'delivered' ? d.body.delivery : undefined;
  });
  assert.deepEqual(
    detail.attempts.map((a: { status_code: number }) => a.status_code),
    [503, 200],
  );
});

test('a test session.status repeats the instance status, so the session page does not change', async () => {
  const before = (await h.request('GET', `/instances/${ins}`)).body.instance;
  const r = await sendTest('session.status');
  assert.equal(r.status, 202);
  await eventually(async () =>
    receiver.received.some((x) => x.body.event === 'session.status') ? true : undefined,
  );
  const sent = receiver.received.find((x) => x.body.event === 'session.status');
  assert.deepEqual(sent?.body.payload, { status: before.status });
  assert.deepEqual((await h.request('GET', `/instances/${ins}`)).body.instance, before);
});

test('a kind the webhook does not subscribe to, or no kind at all, is a 400 naming event', async () => {
  const notSubscribed = await sendTest('message.ack');
  assert.equal(notSubscribed.status, 400);
  assert.equal(notSubscribed.body.error.details[0].field, 'event');
  assert.match(notSubscribed.body.error.message, /does not subscribe to "message.ack"/);
  const unknown = await sendTest('mesage');
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error.message, /^event: unknown event kind "mesage"/);
  const missing = await h.request('POST', `/instances/${ins}/webhooks/${whk}/test`, { body: {} });
  assert.equal(missing.status, 400);
  assert.match(missing.body.error.message, /^event: is required/);
});

test('a disabled webhook is a 409; an unknown webhook a 404', async () => {
  const disabled = await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'] }, false);
  const r = await sendTest('message', disabled);
  assert.equal(r.status, 409);
  assert.match(r.body.error.message, /is disabled; enable it/);
  const missing = await sendTest('message', 'whk_doesnotexist0000000000');
  assert.equal(missing.status, 404);
});
