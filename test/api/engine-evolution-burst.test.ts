/**
 * A burst from Evolution's webhook sender (test/support/evolution-sender.ts): 1,000 bodies posted to the Evolution
 * endpoint, 64 connections at a time, each on a connection of its own. None is answered with a 5xx, every message is
 * stored once and reaches the receiver once, and the instance shows the connection.update of the newest date_time.
 * On both stores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evolutionBody } from '../fixtures/evolution-events.ts';
import { type EvolutionSend, EvolutionSender } from '../support/evolution-sender.ts';
import { ADMIN_KEY, eventually, startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const BODIES = 1000;
const CONNECTIONS = 64;
const T = Date.parse('2026-11-20T09:00:00.000Z');
/** Every 100th body is a connection update; its date_time orders them, whatever order they commit in. */
const STATES = ['connecting', 'open', 'close', 'open'];
const STATUS: Record<string, string> = { connecting: 'STARTING', open: 'WORKING', close: 'STOPPED' };

function body(i: number): Record<string, unknown> {
  const date_time = new Date(T + i).toISOString();
  if (i % 100 === 99) {
    const state = STATES[Math.floor(i / 100) % STATES.length];
    return evolutionBody('connection.update', { state, wuid: `55119${i}@s.whatsapp.net` }, { date_time });
  }
  const key = {
    remoteJid: '5511988887777@s.whatsapp.net',
    fromMe: false,
    id: `3EB0BURST${String(i).padStart(8, '0')}`,
  };
  const data = {
    key,
    message: { conversation: `mensagem ${i}` },
    messageTimestamp: Math.floor((T + i) / 1000),
  };
  return evolutionBody('messages.upsert', data, { date_time });
}

test(`${BODIES} bodies from Evolution's sender, ${CONNECTIONS} connections at once: no 5xx, each stored and delivered once`, async (t) => {
  const h = await startTestHerald();
  t.after(() => h.close());
  const ins = await h.createInstance('burst');
  const receiver = await TestReceiver.start();
  t.after(() => receiver.close());
  const webhookId = await h.createWebhook(ins, { destination_url: receiver.url, events: ['message'] });
  const evolution = new EvolutionSender({
    url: `${h.url}/instances/${ins}/engine/evolution`,
    headers: { Authorization: `Bearer ${ADMIN_KEY}` },
    // A 5xx is retried by Evolution: the test sees every answer, so the first one is the one that counts.
    maxAttempts: 1,
  });
  const bodies = Array.from({ length: BODIES }, (_, i) => body(i));
  const records: EvolutionSend[] = new Array(BODIES);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < BODIES) {
        const i = next++;
        records[i] = (await evolution.send(bodies[i])) as EvolutionSend;
      }
    }),
  );
  const answers = new Map<string, number>();
  for (const r of records)
    for (const a of r.answers) answers.set(String(a), (answers.get(String(a)) ?? 0) + 1);
  assert.deepEqual(Object.fromEntries(answers), { 202: BODIES }, 'every post answered 202 at once');
  const messages = records.flatMap((r) => r.accepted?.events.filter((e: any) => e.event === 'message') ?? []);
  const eventIds = new Set(messages.map((e: any) => e.event_id));
  const expected = BODIES - BODIES / 100;
  assert.equal(eventIds.size, expected, 'one message per body');

  await eventually(
    async () => {
      const { body } = await h.request('GET', `/instances/${ins}/webhooks/${webhookId}`);
      return body.webhook.health.delivered_24h >= expected ? true : undefined;
    },
    120_000,
    'every delivery made',
  );
  const delivered = receiver.received.map((r) => r.body.event_id);
  assert.equal(delivered.length, expected);
  assert.deepEqual(new Set(delivered), eventIds);

  const last = BODIES - 1;
  const { body: shown } = await h.request('GET', `/instances/${ins}`);
  assert.deepEqual(
    [shown.instance.status, shown.instance.phone],
    [STATUS[STATES[Math.floor(last / 100) % STATES.length]], `55119${last}`],
    'the connection update of the newest date_time',
  );
});
