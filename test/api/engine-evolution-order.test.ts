/**
 * Ordered delivery per chat with Evolution's events: a message's ack, edit, reaction and revoke carry the chat of the
 * message (Evolution's `key.remoteJid`, or `remoteJid` of an ack), so with `ordering: "chat"` they wait behind it,
 * in the order Herald accepted them, while another chat goes on. The receiver holds the first delivery on purpose.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { evolutionBody } from '../fixtures/evolution-events.ts';
import { postEvolution } from '../support/evolution-sender.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
let receiver: TestReceiver;
before(async () => {
  h = await startTestHerald();
  receiver = await TestReceiver.start();
});
after(async () => {
  await receiver.close();
  await h.close();
});

const ANA = '5511988887777@s.whatsapp.net';
const BIA = '5511977776666@s.whatsapp.net';
const ID = '3EB0ORDERED0000001';
const own = { remoteJid: ANA, fromMe: true, id: ID };

test("a message's ack, edit, reaction and revoke wait behind it in its chat; another chat does not", async () => {
  const ins = await h.createInstance();
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'], ordering: 'chat' });
  let release = () => {};
  const held = new Promise<{ status: number }>((resolve) => {
    release = () => resolve({ status: 200 });
  });
  // Ana's first event, the message the session sent, is held until the test lets it go.
  receiver.answer = (req) =>
    req.body.event === 'message.any' && req.body.payload.id === ID ? held : { status: 200 };
  const bodies = [
    evolutionBody('send.message', {
      key: own,
      message: { conversation: 'Seu pedido saiu' },
      messageTimestamp: 1795341600,
    }),
    evolutionBody('messages.update', { keyId: ID, remoteJid: ANA, fromMe: true, status: 'DELIVERY_ACK' }),
    evolutionBody('send.message.update', {
      key: own,
      editedMessage: { conversation: 'Seu pedido saiu hoje' },
      timestampMs: '1795341660000',
    }),
    evolutionBody('messages.upsert', {
      key: { remoteJid: ANA, fromMe: false, id: '3EB0REACTION000001' },
      message: { reactionMessage: { key: own, text: '🙏' } },
      messageTimestamp: 1795341670,
    }),
    evolutionBody('messages.edited', { key: own, type: 'REVOKE' }),
  ];
  const ids: string[] = [];
  for (const body of bodies) {
    const res = await postEvolution(h.url, ins, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    ids.push(res.body.event_id);
  }
  const other = await postEvolution(
    h.url,
    ins,
    evolutionBody('messages.upsert', {
      key: { remoteJid: BIA, fromMe: false, id: '3EB0OTHERCHAT00001' },
      message: { conversation: 'oi' },
      messageTimestamp: 1795341680,
    }),
  );
  // Bia's message and message.any arrive while Ana's first delivery is held; nothing else of Ana's chat does.
  const bias = other.body.events.map((e: { event_id: string }) => e.event_id) as string[];
  const arrived = await receiver.waitFor(3);
  assert.deepEqual(arrived.map((r) => r.body.event_id).sort(), [ids[0], ...bias].sort());
  const deliveries = (await h.request('GET', `/instances/${ins}/deliveries?limit=100`)).body.deliveries;
  const chatOf = new Map(deliveries.map((d: { event_id: string; chat: string }) => [d.event_id, d.chat]));
  for (const id of ids) assert.equal(chatOf.get(id), '5511988887777@c.us', id);
  assert.equal(receiver.received.length, 3);
  release();
  const all = await receiver.waitFor(3 + ids.length - 1);
  const anas = all.map((r) => r.body.event_id).filter((id) => ids.includes(id));
  assert.deepEqual(anas, ids, 'in the order accepted');
  assert.deepEqual(
    all.filter((r) => ids.includes(r.body.event_id)).map((r) => r.body.event),
    ['message.any', 'message.ack', 'message.edited', 'message.reaction', 'message.revoked'],
  );
});
