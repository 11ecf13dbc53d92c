/**
 * Every delivery shows the chat of its event, computed at ingest (domain/chat-key.ts): a message and what concerns it
 * (its ack, its reaction) share one chat, through the client API and WAHA's engine endpoint alike, on either store.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
let receiver: TestReceiver;
let ins: string;
before(async () => {
  h = await startTestHerald();
  receiver = await TestReceiver.start();
  ins = await h.createInstance('chats');
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'] });
});
after(async () => {
  await receiver.close();
  await h.close();
});

const chatOf = async (eventId: string) => {
  const r = await h.request('GET', `/instances/${ins}/deliveries?event_id=${eventId}`);
  assert.equal(r.status, 200);
  return r.body.deliveries.map((d: { chat: string | null }) => d.chat);
};

test("a message, its ack and its reaction show the message's chat; a session event shows the session's key", async () => {
  const ALICE = '491701234567@c.us';
  const message = await h.publish(ins, { event: 'message', payload: messagePayload() });
  const ack = await h.publish(ins, {
    event: 'message.ack',
    payload: {
      id: `false_${ALICE}_3EB0C767D26A`,
      from: ALICE,
      to: '14155550100@c.us',
      fromMe: false,
      ack: 3,
      ackName: 'READ',
    },
  });
  const reaction = await h.publish(ins, {
    event: 'message.reaction',
    payload: {
      id: 'true_491701234567@c.us_R1',
      from: '14155550100@c.us',
      to: ALICE,
      fromMe: true,
      reaction: { text: '👍', messageId: `false_${ALICE}_3EB0C767D26A` },
    },
  });
  const status = await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
  for (const r of [message, ack, reaction, status]) assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.deepEqual(await chatOf(message.body.event_id), [ALICE]);
  assert.deepEqual(await chatOf(ack.body.event_id), [ALICE]);
  assert.deepEqual(await chatOf(reaction.body.event_id), [ALICE]);
  assert.deepEqual(await chatOf(status.body.event_id), ['*']);
  const detail = await h.request('GET', `/instances/${ins}/deliveries?event_id=${message.body.event_id}`);
  const one = await h.request('GET', `/instances/${ins}/deliveries/${detail.body.deliveries[0].delivery_id}`);
  assert.equal(one.body.delivery.chat, ALICE);
});
