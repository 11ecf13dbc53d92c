/**
 * Evolution API's own webhook pointed at Herald: POST /instances/{id}/engine/evolution (and Evolution's byEvents
 * paths) with Evolution's body as Evolution sends it. One body, several events; idempotency without an event id;
 * the two reports of one revoke; instances apart; kinds Herald has none for; bad bodies named by field; keys;
 * the session.status of the newest date_time; a hidden-id sender's phone, then what the instance learned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { evolutionBody, SESSION } from '../fixtures/evolution-events.ts';
import { postEvolution } from '../support/evolution-sender.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;

let h: TestHerald;
before(async () => {
  h = await startTestHerald();
});
after(() => h.close());

async function hook(t: TestContext, ins: string, events: string[], config: Obj = {}) {
  const r = await TestReceiver.start();
  t.after(() => r.close());
  await h.createWebhook(ins, { destination_url: r.url, events, ...config });
  return r;
}

const ANA = '5511988887777@s.whatsapp.net';
let n = 0;
/** A new incoming text, as messages.upsert carries it (prepareMessage). */
const text = (more: Obj = {}, keyMore: Obj = {}) => {
  n++;
  return {
    key: { remoteJid: ANA, fromMe: false, id: `3EB0TEST${String(n).padStart(12, '0')}`, ...keyMore },
    pushName: 'Ana',
    status: 'DELIVERY_ACK',
    message: { conversation: `mensagem ${n}` },
    messageType: 'conversation',
    messageTimestamp: 1795341600 + n,
    ...more,
  };
};

/** Deliveries of an instance as its delivery view lists them. */
async function deliveriesOf(ins: string): Promise<Obj[]> {
  return (await h.request('GET', `/instances/${ins}/deliveries?limit=100`)).body.deliveries;
}

describe('the Evolution endpoint takes Evolution bodies', () => {
  test('messages.upsert: a message, then a message.any, each to its own subscribers, in one answer', async (t) => {
    const ins = await h.createInstance();
    const messages = await hook(t, ins, ['message']);
    const any = await hook(t, ins, ['message.any']);
    const body = evolutionBody('messages.upsert', text());
    const res = await postEvolution(h.url, ins, body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [message, anyEvent] = res.body.events;
    assert.deepEqual(
      res.body.events.map((e: Obj) => [e.event, e.deliveries]),
      [
        ['message', 1],
        ['message.any', 1],
      ],
    );
    assert.deepEqual(Object.keys(res.body).sort(), ['deliveries', 'event_id', 'events', 'success']);
    assert.equal(res.body.event_id, message.event_id);
    assert.notEqual(message.event_id, anyEvent.event_id);
    const [[m], [a]] = await Promise.all([messages.waitFor(1), any.waitFor(1)]);
    assert.equal(m.body.event, 'message');
    assert.equal(a.body.event, 'message.any');
    assert.equal(m.body.payload.from, ANA);
    assert.equal(m.body.payload.to, SESSION);
    assert.equal(m.body.payload.from_phone, '5511988887777');
  });

  test('send.message (the session sent it) reaches message.any only', async (t) => {
    const ins = await h.createInstance();
    const messages = await hook(t, ins, ['message']);
    const any = await hook(t, ins, ['message.any']);
    const res = await postEvolution(h.url, ins, evolutionBody('send.message', text({}, { fromMe: true })));
    assert.equal(res.status, 202);
    assert.deepEqual(
      res.body.events.map((e: Obj) => e.event),
      ['message.any'],
    );
    const [got] = await any.waitFor(1);
    assert.equal(got.body.payload.from, SESSION);
    assert.equal(got.body.payload.to, ANA);
    assert.equal(got.body.payload.from_phone, '5511955554444');
    assert.equal(messages.received.length, 0);
  });

  test("every path Evolution builds (byEvents, its url's trailing slash) takes the body; the body's event decides", async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message']);
    const body = evolutionBody('messages.upsert', text());
    const answers = [];
    for (const path of ['', '/', '/messages-upsert', '//messages-upsert', '/send-message']) {
      const res = await postEvolution(h.url, ins, body, { path });
      assert.equal(res.status, 202, `${path}: ${JSON.stringify(res.body)}`);
      answers.push(res.body.events);
    }
    // One body, one event, however it came: Evolution's retries by whichever url.
    for (const a of answers) assert.deepEqual(a, answers[0]);
    await r.waitFor(1);
    assert.equal((await deliveriesOf(ins)).length, 1, 'the message, once');
  });

  test('the same body twice (Evolution retrying) is stored and delivered once', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['*']);
    const body = evolutionBody('messages.update', {
      keyId: '3EB0ACKED0000001',
      remoteJid: ANA,
      fromMe: true,
      status: 'READ',
    });
    const first = await postEvolution(h.url, ins, body);
    const again = await postEvolution(h.url, ins, body);
    assert.equal(first.status, 202);
    assert.deepEqual(again.body, first.body);
    await r.waitFor(1);
    assert.equal((await deliveriesOf(ins)).length, 1);
  });

  test('the same message at two instances is two events, one at each', async (t) => {
    const [a, b] = [await h.createInstance(), await h.createInstance()];
    const [ra, rb] = [await hook(t, a, ['message']), await hook(t, b, ['message'])];
    const body = evolutionBody('messages.upsert', text());
    const atA = await postEvolution(h.url, a, body);
    const atB = await postEvolution(h.url, b, body);
    assert.equal(atA.status, 202);
    assert.equal(atB.status, 202, JSON.stringify(atB.body));
    assert.notEqual(atA.body.event_id, atB.body.event_id);
    const [[gotA], [gotB]] = await Promise.all([ra.waitFor(1), rb.waitFor(1)]);
    assert.equal(gotA.body.instance_id, a);
    assert.equal(gotB.body.instance_id, b);
  });

  test("Evolution's two reports of one revoke (a REVOKE edit, then messages.delete) are one event", async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message.revoked']);
    const key = { remoteJid: ANA, fromMe: false, id: '3EB0REVOKEDTWICE01' };
    const edit = await postEvolution(h.url, ins, evolutionBody('messages.edited', { key, type: 'REVOKE' }));
    const del = await postEvolution(h.url, ins, evolutionBody('messages.delete', key));
    assert.equal(edit.status, 202);
    assert.equal(del.body.event_id, edit.body.event_id);
    const [got] = await r.waitFor(1);
    assert.equal(got.body.payload.revokedMessageId, key.id);
    assert.equal((await deliveriesOf(ins)).length, 1);
  });

  test('a message reported again with a new date_time (Evolution reports some twice) is a duplicate', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['message']);
    const data = text();
    const first = await postEvolution(h.url, ins, evolutionBody('messages.upsert', data));
    const second = await postEvolution(h.url, ins, evolutionBody('messages.upsert', data));
    assert.equal(second.status, 202);
    assert.equal(second.body.event_id, first.body.event_id);
    await r.waitFor(1);
    assert.equal((await deliveriesOf(ins)).length, 1);
  });

  test('each ack value of a message is its own event; an edit, a reaction and a revoke theirs', async (t) => {
    const ins = await h.createInstance();
    const r = await hook(t, ins, ['*']);
    const id = '3EB0MANYSTEPS00001';
    const ack = (status: string) =>
      evolutionBody('messages.update', { keyId: id, remoteJid: ANA, fromMe: true, status });
    const bodies = [
      ack('SERVER_ACK'),
      ack('DELIVERY_ACK'),
      ack('READ'),
      evolutionBody('send.message.update', {
        key: { remoteJid: ANA, fromMe: true, id },
        editedMessage: { conversation: 'corrigido' },
        timestampMs: '1795341700000',
      }),
    ];
    const ids = new Set<string>();
    for (const body of bodies) ids.add((await postEvolution(h.url, ins, body)).body.event_id);
    assert.equal(ids.size, 4);
    const got = await r.waitFor(4);
    assert.deepEqual(got.map((g) => g.body.payload.ack ?? g.body.event).sort(), [1, 2, 3, 'message.edited']);
  });

  test('an event Herald has no kind for is accepted and goes only to webhooks subscribed to *', async (t) => {
    const ins = await h.createInstance();
    const star = await hook(t, ins, ['*']);
    const named = await hook(t, ins, ['message', 'session.status']);
    const data = [{ remoteJid: ANA, pushName: 'Ana' }];
    const res = await postEvolution(h.url, ins, evolutionBody('contacts.update', data));
    assert.equal(res.status, 202);
    assert.deepEqual(res.body.events, [
      { event: 'contacts.update', event_id: res.body.event_id, deliveries: 1 },
    ]);
    const [got] = await star.waitFor(1);
    assert.deepEqual(got.body.payload, { _evolution: data });
    assert.equal(named.received.length, 0);
  });

  test('bad bodies are 400s naming the field', async () => {
    const ins = await h.createInstance();
    const cases: [unknown, string][] = [
      [[1, 2], 'body'],
      [{ data: {} }, 'event'],
      [{ event: '', data: {} }, 'event'],
      [{ event: 'messages.upsert' }, 'data'],
      [{ event: 'messages.upsert', data: null }, 'data'],
      [{ event: 'messages.upsert', data: { key: { fromMe: false } } }, 'data.key.id'],
      [{ event: 'messages.upsert', data: { key: { id: 'X' } } }, 'data.key.fromMe'],
      [{ event: 'messages.update', data: { status: 'READ', fromMe: true } }, 'data.keyId'],
      [{ event: 'messages.update', data: { status: 'READ', keyId: 'X' } }, 'data.fromMe'],
      [{ event: 'messages.delete', data: { remoteJid: ANA } }, 'data.id'],
      [{ event: 'messages.edited', data: { type: 'REVOKE' } }, 'data.key'],
      [
        {
          event: 'messages.upsert',
          data: { key: { id: 'X', fromMe: false }, message: { reactionMessage: { text: '👍' } } },
        },
        'data.message.reactionMessage.key.id',
      ],
    ];
    for (const [body, field] of cases) {
      const res = await postEvolution(h.url, ins, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.status}`);
      assert.equal(res.body.error.details[0].field, field, JSON.stringify(res.body));
    }
    // A status Herald has no word for (or none) is no ack: kept, never refused.
    for (const status of ['DELETED', undefined]) {
      const res = await postEvolution(h.url, ins, evolutionBody('messages.update', { keyId: 'X', status }));
      assert.equal(res.status, 202);
      assert.equal(res.body.events[0].event, 'messages.update');
    }
  });

  test('a wrong key is a 401, another instance’s key a 403, nothing stored', async () => {
    const [a, b] = [await h.createInstance(), await h.createInstance()];
    const keyOfB = (await h.request('POST', `/instances/${b}/keys`, { body: { scope: 'publish' } })).body.key;
    const body = evolutionBody('messages.upsert', text());
    assert.equal((await postEvolution(h.url, a, body, { key: 'hk_wrong' })).status, 401);
    assert.equal((await postEvolution(h.url, a, body, { key: null })).status, 401);
    assert.equal((await postEvolution(h.url, a, body, { key: keyOfB })).status, 403);
    assert.equal((await postEvolution(h.url, b, body, { key: keyOfB })).status, 202);
    assert.equal((await deliveriesOf(a)).length, 0);
  });
});

describe('the instance follows the session.status of the newest date_time', () => {
  test('connection updates posted in any order: the newest is shown, with its phone', async () => {
    for (const order of ['newest first', 'newest last']) {
      const ins = await h.createInstance();
      const connecting = evolutionBody('connection.update', { state: 'connecting', statusReason: 200 });
      const open = evolutionBody('connection.update', { state: 'open', wuid: SESSION, statusReason: 200 });
      const bodies = order === 'newest first' ? [open, connecting] : [connecting, open];
      for (const b of bodies) assert.equal((await postEvolution(h.url, ins, b)).status, 202);
      const shown = await eventually(async () => {
        const i = (await h.request('GET', `/instances/${ins}`)).body.instance;
        return i.status === 'WORKING' ? i : undefined;
      });
      assert.equal(shown.phone, '5511955554444', order);
    }
  });
});

test('a sender known by a hidden id: its phone from the id Baileys sends beside it, then from what was learned', async () => {
  const ins = await h.createInstance();
  const r = await TestReceiver.start();
  try {
    await h.createWebhook(ins, { destination_url: r.url, events: ['message'] });
    const lid = '123456789012345@lid';
    const from = (id: string, keyMore: Record<string, unknown>) =>
      evolutionBody('messages.upsert', {
        key: { remoteJid: lid, fromMe: false, id, ...keyMore },
        message: { conversation: 'oi' },
        messageTimestamp: 1795341600,
      });
    await postEvolution(
      h.url,
      ins,
      from('3EB0LID000000001', { remoteJidAlt: '5511966665555@s.whatsapp.net' }),
    );
    const [first] = await r.waitFor(1);
    assert.equal(first.body.payload.from_phone, '5511966665555');
    await postEvolution(h.url, ins, from('3EB0LID000000002', {}));
    const [, later] = await r.waitFor(2);
    assert.equal(later.body.payload.from, lid);
    assert.equal(later.body.payload.from_phone, '5511966665555', 'learned from the first');
  } finally {
    await r.close();
  }
});
