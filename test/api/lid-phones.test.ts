/**
 * Senders known by a hidden id (`@lid`): an event that carries the phone id beside the hidden one teaches the
 * instance the pair, and a later message from the bare hidden id gets its from_phone from what the instance learned.
 * Per instance; on both stores (HERALD_TEST_STORE=postgres).
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { postWaha, wahaBody } from '../support/engine.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

const LID = '98765432109876@lid';
let n = 0;
const msgId = () => `3EB0${String(++n).padStart(16, '0')}`;

/** A NOWEB private message from `from`; `alt` is the phone id Baileys puts beside it (key.remoteJidAlt). */
function noweb(from: string, alt?: string, fromMe = false) {
  const id = msgId();
  return {
    id: `${fromMe}_${from}_${id}`,
    timestamp: 1783000840,
    from,
    fromMe,
    source: 'app',
    body: 'Hi',
    hasMedia: false,
    _data: { key: { remoteJid: from, ...(alt ? { remoteJidAlt: alt } : {}), fromMe, id } },
  };
}

/** A WEBJS message in a group from the hidden id: WhatsApp Web sends nothing beside it. */
function webjsGroup(participant: string) {
  const id = msgId();
  const group = '120363025246125888@g.us';
  return {
    id: `false_${group}_${id}_${participant}`,
    timestamp: 1783000860,
    from: group,
    fromMe: false,
    participant,
    to: '15550001111@c.us',
    body: 'Hello all',
    hasMedia: false,
    _data: { id: { fromMe: false, remote: group, id, participant }, author: participant },
  };
}

/** An instance with a webhook for messages; returns it and what its receiver got, by message id. */
async function instance(t: TestContext) {
  const ins = await h.createInstance('lids');
  const r = await TestReceiver.start();
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events: ['message', 'message.any'] });
  let sent = 0;
  return {
    ins,
    /** Posts WAHA's body and returns the delivered payload. */
    async post(event: string, payload: Record<string, unknown>, engine = 'NOWEB') {
      const res = await postWaha(h.url, ins, wahaBody(event, payload, { engine }));
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const got = await r.waitFor(++sent);
      return got[sent - 1].body.payload;
    },
  };
}

describe('from_phone of a hidden-id sender', () => {
  test('an event with both ids teaches the pair; a later one from the bare id gets it; another instance does not', async (t) => {
    const a = await instance(t);
    const b = await instance(t);
    assert.equal((await a.post('message', noweb(LID))).from_phone, undefined, 'nothing learned yet');
    const taught = await a.post('message', noweb(LID, '14155550123@s.whatsapp.net'));
    assert.equal(taught.from_phone, '14155550123', 'the phone beside it');
    assert.equal((await a.post('message', noweb(LID))).from_phone, '14155550123', 'learned');
    assert.equal((await a.post('message', webjsGroup(LID), 'WEBJS')).from_phone, '14155550123');
    assert.equal((await b.post('message', noweb(LID))).from_phone, undefined, 'another instance');
  });

  test('GOWS group participants (WAHA’s pn) teach; a later pair replaces what was learned', async (t) => {
    const a = await instance(t);
    const join = {
      timestamp: 1783002340917,
      group: {
        id: '120363041234567890@g.us',
        participants: [{ id: LID, pn: '14155550123@c.us', role: 'superadmin' }],
      },
      _data: {},
    };
    await postWaha(h.url, a.ins, wahaBody('group.v2.join', join, { engine: 'GOWS' }));
    assert.equal((await a.post('message', webjsGroup(LID), 'WEBJS')).from_phone, '14155550123');
    await a.post('message', noweb(LID, '14155550999@s.whatsapp.net'));
    assert.equal((await a.post('message', noweb(LID))).from_phone, '14155550999', 'the later pair');
  });

  test('a message the session sent teaches nothing of the chat (its key pairs the chat with the session)', async (t) => {
    const a = await instance(t);
    const sent = await a.post('message.any', noweb(LID, '15550001111@s.whatsapp.net', true));
    assert.equal(sent.from_phone, '15550001111', 'the session’s own phone');
    assert.equal((await a.post('message', noweb(LID))).from_phone, undefined);
  });

  test('Herald’s own batch: what one event carries serves the others of the same call', async () => {
    const ins = await h.createInstance('lids batch');
    const r = await TestReceiver.start();
    try {
      await h.createWebhook(ins, { destination_url: r.url, events: ['message'] });
      const res = await h.request('POST', `/instances/${ins}/events/batch`, {
        body: {
          events: [
            { event: 'message', payload: noweb(LID) },
            { event: 'message', payload: noweb(LID, '14155550123@s.whatsapp.net') },
          ],
        },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const got = await r.waitFor(2);
      assert.deepEqual(
        got.map((g) => g.body.payload.from_phone),
        ['14155550123', '14155550123'],
      );
    } finally {
      await r.close();
    }
  });
});
