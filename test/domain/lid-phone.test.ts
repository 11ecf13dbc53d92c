/**
 * Hidden ids (`@lid`): the phone id an engine sends beside one, the pairs a payload teaches, and from_phone for a
 * hidden-id sender, over every real WAHA body (test/fixtures/waha-events.ts) and the shapes each engine uses.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MESSAGE_KINDS } from '../../src/domain/events.ts';
import { lidOf } from '../../src/domain/jid.ts';
import { lidBatch, lidPairs, newPairs } from '../../src/domain/lid-phone.ts';
import { normalise } from '../../src/domain/normalise.ts';
import { completed, WAHA_EVENTS } from '../fixtures/waha-events.ts';

type Obj = Record<string, any>;
const msg = (p: Obj): Obj => ({ id: 'm1', fromMe: false, ...p });
const fromPhone = (payload: Obj, learned?: Map<string, string>, session: string | null = null) =>
  normalise('message', payload, session, learned).payload.from_phone;

/** Message fixtures whose sender is a hidden id, and the from_phone the engine's own payload gives. */
const LID_SENDERS: Record<string, string | null> = {
  'message group GOWS (@lid participant, to = sender)': '14155550123',
  'message DM NOWEB from @lid sender': '14155550123',
  'message group NOWEB (@lid participant, participantAlt)': '14155550177',
  'message DM GOWS from @lid sender (SenderAlt)': '14155550199',
  'message DM WEBJS from @lid sender (no phone beside it)': null,
  'message status@broadcast NOWEB from @lid author (remoteJidAlt)': '14155550188',
};

/** Every fixture that teaches a pair, and what; every other teaches nothing. */
const PAIRS: Record<string, Record<string, string>> = {
  'message text NOWEB': { '98765432109876@lid': '14155550123' },
  'message text GOWS': { '98765432109876@lid': '14155550123' },
  'message group NOWEB (participant)': { '98765432109876@lid': '14155550123' },
  'message group GOWS (@lid participant, to = sender)': { '98765432109876@lid': '14155550123' },
  'message DM NOWEB from @lid sender': { '98765432109876@lid': '14155550123' },
  'message group NOWEB (@lid participant, participantAlt)': { '112233445566778@lid': '14155550177' },
  'message DM GOWS from @lid sender (SenderAlt)': { '334455667788990@lid': '14155550199' },
  'message status@broadcast NOWEB from @lid author (remoteJidAlt)': { '223344556677889@lid': '14155550188' },
  'message.ack.group GOWS (to = reader)': { '98765432109876@lid': '14155550123' },
  'group.v2.join GOWS (ms timestamp, pn, no invite key)': {
    '98765432109876@lid': '14155550123',
    '201234567890123@lid': '14155550100',
  },
  'group.v2.leave GOWS (docs example)': { '98765432109876@lid': '14155550123' },
  'group.v2.update GOWS (docs example)': { '98765432109876@lid': '14155550123' },
  'group.v2.participants.join-request GOWS (unlisted, docs example)': { '123456789@lid': '123456789' },
};

describe('every real WAHA body', () => {
  for (const fixture of WAHA_EVENTS) {
    const body = completed(fixture);
    test(`${fixture.name}: the pairs it teaches`, () => {
      assert.deepEqual(Object.fromEntries(lidPairs(body.payload)), PAIRS[fixture.name] ?? {});
    });
    if (!MESSAGE_KINDS.includes(body.event)) continue;
    const sender = body.payload.fromMe ? null : lidOf(body.payload.participant ?? body.payload.from);
    test(`${fixture.name}: from_phone`, () => {
      const session = body.me?.id?.split('@')[0] ?? null;
      const alone = normalise(body.event, body.payload, session).payload.from_phone;
      if (sender === null) {
        assert.ok(!(fixture.name in LID_SENDERS), 'listed as a hidden-id sender');
        // What an instance learned changes nothing for a sender with a phone id.
        const learned = new Map([['98765432109876@lid', '4900000000']]);
        assert.equal(normalise(body.event, body.payload, session, learned).payload.from_phone, alone);
        return;
      }
      assert.ok(fixture.name in LID_SENDERS, 'a hidden-id sender must be listed');
      assert.equal(alone ?? null, LID_SENDERS[fixture.name]);
      const learned = new Map([[sender, '4900000000']]);
      const withLearned = normalise(body.event, body.payload, session, learned).payload.from_phone;
      assert.equal(withLearned, alone ?? '4900000000', 'the phone beside it first, else the learned one');
    });
  }
  test('every listed hidden-id sender is a fixture', () => {
    const names = new Set(WAHA_EVENTS.map((f) => f.name));
    for (const name of [...Object.keys(LID_SENDERS), ...Object.keys(PAIRS)]) assert.ok(names.has(name), name);
  });
});

describe('the phone id beside a hidden id, per engine', () => {
  const lid = '123456789012345@lid';
  const pn = '491701234567@s.whatsapp.net';
  const group = '120363041234567890@g.us';
  const table: [string, Obj, string | undefined][] = [
    [
      'NOWEB private chat: key.remoteJidAlt',
      { from: lid, _data: { key: { remoteJid: lid, remoteJidAlt: pn, fromMe: false } } },
      '491701234567',
    ],
    [
      'NOWEB group: key.participantAlt',
      {
        from: group,
        participant: lid,
        _data: { key: { remoteJid: group, participant: lid, participantAlt: pn, fromMe: false } },
      },
      '491701234567',
    ],
    [
      'NOWEB story: key.remoteJidAlt (a broadcast is no group)',
      {
        from: 'status@broadcast',
        participant: lid,
        _data: { key: { remoteJid: 'status@broadcast', remoteJidAlt: pn, participant: lid, fromMe: false } },
      },
      '491701234567',
    ],
    [
      'older Baileys, private chat: key.senderPn',
      { from: lid, _data: { key: { remoteJid: lid, senderLid: lid, senderPn: pn, fromMe: false } } },
      '491701234567',
    ],
    [
      'older Baileys, group: key.participantPn',
      {
        from: group,
        participant: lid,
        _data: { key: { remoteJid: group, participant: lid, participantPn: pn, fromMe: false } },
      },
      '491701234567',
    ],
    [
      'GOWS: Info.SenderAlt',
      { from: lid, _data: { Info: { Chat: lid, Sender: lid, SenderAlt: pn } } },
      '491701234567',
    ],
    [
      'a device suffix on either side',
      {
        from: lid,
        _data: { Info: { Sender: '123456789012345:3@lid', SenderAlt: '491701234567:3@s.whatsapp.net' } },
      },
      '491701234567',
    ],
    [
      'WEBJS: nothing beside it',
      { from: lid, _data: { id: { remote: lid }, from: lid, to: '15550001111@c.us' } },
      undefined,
    ],
    [
      'the pair of someone else is not the sender’s',
      {
        from: group,
        participant: lid,
        _data: { key: { remoteJid: group, participant: '555@lid', participantAlt: pn, fromMe: false } },
      },
      undefined,
    ],
    [
      'an alternative that is no phone id',
      { from: lid, _data: { key: { remoteJid: lid, remoteJidAlt: '555@lid', fromMe: false } } },
      undefined,
    ],
    [
      'the engine’s own from_phone is kept',
      { from: lid, from_phone: '4900', _data: { key: { remoteJid: lid, remoteJidAlt: pn, fromMe: false } } },
      '4900',
    ],
  ];
  for (const [name, payload, expected] of table) {
    test(name, () => {
      const out = normalise('message', msg(payload), null).payload;
      assert.equal(out.from_phone, expected);
      assert.equal('from_phone' in out, expected !== undefined, 'absent, not null, when there is none');
    });
  }
  test('a message the session sent: its own phone, never the chat’s', () => {
    const sent = msg({
      fromMe: true,
      from: lid,
      _data: { key: { remoteJid: lid, remoteJidAlt: pn, fromMe: true } },
    });
    assert.equal(fromPhone(sent, undefined, '15550001111'), '15550001111');
    assert.equal(fromPhone(sent, new Map([[lid, '4917']])), undefined, 'without the session’s phone, none');
    assert.equal(lidPairs(sent).size, 0, 'an own message’s key pairs the chat with the session’s own id');
  });
  test('a phone-addressed message names the hidden id beside the phone: a pair too', () => {
    const payload = msg({ from: '491701234567@c.us', _data: { key: { remoteJid: pn, remoteJidAlt: lid } } });
    assert.deepEqual([...lidPairs(payload)], [[lid, '491701234567']]);
    assert.equal(fromPhone(payload), '491701234567');
  });
  test('WAHA’s group participants: id and pn', () => {
    const payload = {
      group: { id: group, participants: [{ id: lid, pn: '491701234567@c.us', role: 'admin' }] },
      participants: [
        { id: '222@lid', pn: '4917022@c.us', role: 'participant' },
        { id: '4917033@c.us', pn: '4917033@c.us', role: 'participant' },
        { id: '333@lid', pn: null, role: 'participant' },
      ],
    };
    assert.deepEqual(Object.fromEntries(lidPairs(payload)), { [lid]: '491701234567', '222@lid': '4917022' });
  });
  test('a learned phone for a sender with none beside it, and only for a hidden id', () => {
    const learned = new Map([[lid, '4917']]);
    assert.equal(fromPhone(msg({ from: lid }), learned), '4917');
    assert.equal(fromPhone(msg({ from: group, participant: '123456789012345:7@lid' }), learned), '4917');
    assert.equal(fromPhone(msg({ from: '120363000000000000@newsletter' }), learned), undefined);
    assert.equal(normalise('message.ack', msg({ from: lid }), null, learned).payload.from_phone, undefined);
  });
  test('lidOf', () => {
    assert.equal(lidOf('123:4@lid'), '123@lid');
    for (const jid of ['123@c.us', 'abc@lid', '@lid', 7, null]) assert.equal(lidOf(jid), null, String(jid));
  });
});

describe('a publish call: what to look up, what is new', () => {
  const lid = '123456789012345@lid';
  const batch = lidBatch([
    { kind: 'message', payload: msg({ from: lid }) },
    {
      kind: 'message',
      payload: msg({
        from: '777@lid',
        _data: { Info: { Sender: '777@lid', SenderAlt: '491777@s.whatsapp.net' } },
      }),
    },
    { kind: 'message.any', payload: msg({ fromMe: true, from: '888@lid' }) },
    { kind: 'message.reaction', payload: { from: '999@lid' } },
    { kind: 'message', payload: 'not an object' },
  ]);
  test('the hidden-id senders and the ids the batch pairs, once each', () => {
    assert.deepEqual(batch.lookup, ['123456789012345@lid', '777@lid']);
    assert.deepEqual([...batch.carried], [['777@lid', '491777']]);
  });
  test('only pairs the instance does not know as they are are written', () => {
    assert.deepEqual(newPairs(batch.carried, new Map()), [['777@lid', '491777']]);
    assert.deepEqual(newPairs(batch.carried, new Map([['777@lid', '491777']])), []);
    assert.deepEqual(newPairs(batch.carried, new Map([['777@lid', '4900']])), [['777@lid', '491777']]);
  });
  test('no hidden id: nothing to look up', () => {
    const none = lidBatch([{ kind: 'message', payload: msg({ from: '4917@c.us' }) }]);
    assert.deepEqual(none, { lookup: [], carried: new Map() });
  });
});
