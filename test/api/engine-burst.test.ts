/**
 * A burst from WAHA's webhook sender (test/support/waha-sender.ts): 2,000 events posted to the engine endpoint, 64
 * connections at a time, each event on a connection of its own. None is answered with a 5xx (a store failure would
 * be a 503, never a 500), every event is stored once and reaches the receiver once, and the instance shows the
 * newest of the session.status events among them. On both stores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, eventually, startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type SendRecord, WahaSender } from '../support/waha-sender.ts';

const EVENTS = 2000;
const CONNECTIONS = 64;
const T = 1_795_341_600_000;
/** Every 100th event is a change of the session's status; their order of commit is the burst's. */
const STATUSES = ['STARTING', 'SCAN_QR_CODE', 'WORKING', 'FAILED'];

function envelope(i: number): Record<string, unknown> {
  if (i % 100 === 99) {
    const status = STATUSES[Math.floor(i / 100) % STATUSES.length];
    return wahaBody('session.status', { status }, { timestamp: T + i, me: { id: `1555${i}@c.us` } });
  }
  return wahaBody(
    'message',
    {
      id: `false_491701234567@c.us_3EB0BURST${String(i).padStart(6, '0')}`,
      timestamp: Math.floor((T + i) / 1000),
      from: '491701234567@c.us',
      fromMe: false,
      body: `message ${i}`,
      hasMedia: false,
    },
    { timestamp: T + i },
  );
}

test(`${EVENTS} engine events from WAHA's sender, ${CONNECTIONS} connections at once: no 5xx, each stored and delivered once`, async (t) => {
  const h = await startTestHerald();
  t.after(() => h.close());
  const ins = await h.createInstance('burst');
  const receiver = await TestReceiver.start();
  t.after(() => receiver.close());
  const webhookId = await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'] });
  const waha = new WahaSender({
    url: `${h.url}/instances/${ins}/engine/waha`,
    headers: { Authorization: `Bearer ${ADMIN_KEY}` },
    // A 5xx is retried by WAHA: the test sees every answer, so the first one is the one that counts.
    retries: 0,
  });
  const envelopes = Array.from({ length: EVENTS }, (_, i) => envelope(i));
  const records: SendRecord[] = new Array(EVENTS);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < EVENTS) {
        const i = next++;
        records[i] = await waha.send(envelopes[i]);
      }
    }),
  );

  const answers = new Map<string, number>();
  for (const r of records)
    for (const a of r.answers) answers.set(String(a), (answers.get(String(a)) ?? 0) + 1);
  assert.deepEqual(Object.fromEntries(answers), { 202: EVENTS }, 'every post answered 202 at once');
  const eventIds = new Set(records.map((r) => r.accepted?.event_id));
  assert.equal(eventIds.size, EVENTS, 'one event per envelope');

  // Every delivery attempted (the webhook's health counts them), each event once at the receiver.
  await eventually(
    async () => {
      const { body } = await h.request('GET', `/instances/${ins}/webhooks/${webhookId}`);
      return body.webhook.health.delivered_24h >= EVENTS ? true : undefined;
    },
    120_000,
    'every delivery made',
  );
  const delivered = receiver.received.map((r) => r.body.event_id);
  assert.equal(delivered.length, EVENTS);
  assert.deepEqual(new Set(delivered), eventIds);

  const last = EVENTS - 1;
  const { body } = await h.request('GET', `/instances/${ins}`);
  assert.deepEqual(
    [body.instance.status, body.instance.phone],
    [STATUSES[Math.floor(last / 100) % STATUSES.length], `1555${last}`],
    'the newest session.status of the burst',
  );
});
