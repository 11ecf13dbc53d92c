/**
 * The chat key (src/domain/chat-key.ts): over every real WAHA body (test/fixtures/waha-events.ts) and every sample,
 * with the chat written out by hand per body, and a message with its ack, reaction, edit and revoke on each engine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chatKey, INSTANCE_CHAT } from '../../src/domain/chat-key.ts';
import { EVENT_KINDS } from '../../src/domain/event-kinds.ts';
import { samplePayload } from '../../src/domain/samples.ts';
import { completed, WAHA_EVENTS } from '../fixtures/waha-events.ts';

type Obj = Record<string, any>;
const ALICE = '14155550123@c.us';
const ALICE_NET = '14155550123@s.whatsapp.net';
const ME = '14155550100@c.us';
const GROUP = '120363025246125888@g.us';
const QA_GROUP = '120363041234567890@g.us';
const STORY = 'status@broadcast';

/** The chat a person would say each fixture belongs to. */
const FIXTURE_CHATS: Record<string, string> = {
  'session.status WORKING WEBJS': INSTANCE_CHAT,
  'session.status SCAN_QR_CODE NOWEB': INSTANCE_CHAT,
  'session.status FAILED NOWEB (logged out)': INSTANCE_CHAT,
  'session.status STOPPED GOWS (never paired, me null)': INSTANCE_CHAT,
  'session.status PASSKEY_REQUIRED GOWS': INSTANCE_CHAT,
  'session.status PASSKEY_CONFIRMATION_REQUIRED GOWS': INSTANCE_CHAT,
  'message text WEBJS (docs example)': '11111111111@c.us',
  'message text WEBJS (current converter)': ALICE,
  'message text NOWEB': ALICE,
  'message text GOWS': ALICE,
  'message image WEBJS (docs media example)': '11111111111@c.us',
  'message image WEBJS with S3 media': '11111111111@c.us',
  'message image NOWEB (current local storage url)': ALICE,
  'message document WEBJS (docs, filename)': '11111111111@c.us',
  'message document GOWS (filename)': ALICE,
  'message video GOWS media download error': ALICE,
  'message image WEBJS hasMedia true media null': ALICE,
  'message video NOWEB not downloaded (media.url null)': ALICE,
  'message sticker NOWEB (body null)': ALICE,
  'message sticker WEBJS (body empty string)': ALICE,
  'message sticker GOWS (no body key)': ALICE,
  'message group WEBJS (participant)': GROUP,
  'message group NOWEB (participant)': GROUP,
  'message group GOWS (@lid participant, to = sender)': GROUP,
  'message DM NOWEB from @lid sender': '98765432109876@lid',
  'message group NOWEB (@lid participant, participantAlt)': GROUP,
  'message DM GOWS from @lid sender (SenderAlt)': '334455667788990@lid',
  'message DM WEBJS from @lid sender (no phone beside it)': '445566778899001@lid',
  // The docs example's id and `from` disagree (placeholders); the id wins, as for the acks that carry only the id.
  'message channel NOWEB (newsletter)': '123123@newsletter',
  'message location WEBJS (numeric coords, body = thumbnail)': ALICE,
  'message location NOWEB (string coords, body null)': ALICE,
  'message vCard GOWS (no body key)': ALICE,
  'message reply NOWEB (docs replyTo with media)': '11111111111@c.us',
  'message reply WEBJS (replyTo without id/participant/hasMedia)': ALICE,
  'message status@broadcast NOWEB (docs status example)': STORY,
  'message status@broadcast GOWS (to = author)': STORY,
  'message status@broadcast NOWEB from @lid author (remoteJidAlt)': STORY,
  'message.any NOWEB outgoing via API (ack 0 PENDING)': ALICE,
  'message.any GOWS outgoing image via API (ack 1 SERVER)': ALICE,
  'message.ack WEBJS (docs minimum, no to)': '11111111111@c.us',
  'message.ack WEBJS (whole message, with to)': ALICE,
  'message.ack NOWEB DEVICE (no to, no participant)': ALICE,
  'message.ack NOWEB PLAYED (voice note)': ALICE,
  'message.ack GOWS READ (to null, _data receipt)': ALICE,
  'message.ack GOWS ERROR (-1, server-error receipt)': '14155550199@c.us',
  'message.ack.group WEBJS (docs example)': '11111111111@g.us',
  'message.ack.group WEBJS (tag:receipt, fromMe reverted)': GROUP,
  'message.ack.group NOWEB (message-receipt.update)': GROUP,
  'message.ack.group GOWS (to = reader)': GROUP,
  'message.waiting WEBJS': '11111111111@c.us',
  'message.reaction WEBJS (docs, float timestamp)': '79111111@c.us',
  'message.reaction NOWEB removed (empty text)': ALICE,
  'message.reaction GOWS group add': GROUP,
  'message.edited WEBJS (id = original message)': ALICE,
  'message.edited NOWEB (id = edit action)': ALICE,
  'message.edited GOWS (id = edit action)': ALICE,
  'message.revoked WEBJS (before present, after.id = revoked id, no _data)': ALICE,
  'message.revoked NOWEB (before null, body null)': ALICE,
  'message.revoked GOWS (before null, after without body key)': ALICE,
  'group.join WEBJS (deprecated, raw GroupNotification)': QA_GROUP,
  'group.join NOWEB (deprecated, raw GroupMetadata)': QA_GROUP,
  'group.leave WEBJS (deprecated, raw GroupNotification)': QA_GROUP,
  'group.v2.join NOWEB (docs example)': '1231231232@g.us',
  'group.v2.join GOWS (ms timestamp, pn, no invite key)': QA_GROUP,
  'group.v2.leave GOWS (docs example)': '1231231232@g.us',
  'group.v2.leave WEBJS (seconds timestamp)': QA_GROUP,
  'group.v2.update GOWS (docs example)': '1231231232@g.us',
  'group.v2.update NOWEB (only changed fields, ms timestamp)': QA_GROUP,
  'group.v2.participants WEBJS (docs example)': '123456789@g.us',
  'group.v2.participants NOWEB demote (role admin)': QA_GROUP,
  'group.v2.participants.join-request GOWS (unlisted, docs example)': '123456789@g.us',
  'group.v2.participants.join-request NOWEB rejected (unlisted)': QA_GROUP,
  'presence.update NOWEB (docs, group typing)': INSTANCE_CHAT,
  'presence.update GOWS (offline, lastSeen seconds)': INSTANCE_CHAT,
  'poll.vote NOWEB (docs, DM)': '1111111111@c.us',
  'poll.vote NOWEB (docs, group)': '3333333333333@g.us',
  // The docs' placeholders differ in length between vote and poll; the vote's own id wins.
  'poll.vote.failed NOWEB (docs)': '11111111111@c.us',
  'chat.archive WEBJS': INSTANCE_CHAT,
  'call.received WEBJS (docs)': INSTANCE_CHAT,
  'call.received NOWEB (video)': INSTANCE_CHAT,
  'call.accepted GOWS': INSTANCE_CHAT,
  'call.rejected WEBJS (rejected via API)': INSTANCE_CHAT,
  'label.upsert NOWEB (docs)': INSTANCE_CHAT,
  'label.deleted NOWEB (docs, empty name)': INSTANCE_CHAT,
  'label.chat.added NOWEB (docs, label null)': INSTANCE_CHAT,
  'label.chat.added NOWEB (label resolved)': INSTANCE_CHAT,
  'label.chat.deleted NOWEB (docs)': INSTANCE_CHAT,
  // The response is itself a message in the chat (id, from and _data.Info.Chat agree); the docs' eventCreationKey
  // names another placeholder chat.
  'event.response GOWS (docs)': '11111111111111111@c.us',
  'event.response.failed GOWS (docs, eventResponse null)': '11111111111111111@c.us',
  'engine.event NOWEB (messages.upsert)': INSTANCE_CHAT,
  'engine.event GOWS (sessions doc shape, events.Receipt)': INSTANCE_CHAT,
  'state.change NOWEB (unlisted, deprecated; raw connection.update)': INSTANCE_CHAT,
};

test('every WAHA fixture gets the chat it belongs to', () => {
  assert.deepEqual(
    Object.keys(FIXTURE_CHATS).sort(),
    WAHA_EVENTS.map((f) => f.name).sort(),
    'one row per fixture',
  );
  for (const f of WAHA_EVENTS) {
    const body = completed(f);
    assert.equal(chatKey(body.event, body.payload), FIXTURE_CHATS[f.name], f.name);
  }
});

const PEER = '15557654321@c.us';
const SAMPLE_GROUP = '120363041234567890@g.us';
/** The chat of each kind's sample (src/domain/samples.ts), which all play in one chat and one group. */
const SAMPLE_CHATS: Record<string, string> = {
  'session.status': INSTANCE_CHAT,
  message: PEER,
  'message.any': PEER,
  'message.ack': PEER,
  'message.reaction': PEER,
  'message.edited': PEER,
  'message.revoked': PEER,
  'message.unknown': PEER, // `to` is bare digits: the same chat as a phone id
  'group.join': SAMPLE_GROUP,
  'group.leave': SAMPLE_GROUP,
  'group.update': SAMPLE_GROUP,
  'group.participants': SAMPLE_GROUP,
  'call.received': INSTANCE_CHAT,
  'call.accepted': INSTANCE_CHAT,
  'call.rejected': INSTANCE_CHAT,
  'label.upsert': INSTANCE_CHAT,
  'label.deleted': INSTANCE_CHAT,
  'label.chat.added': INSTANCE_CHAT,
  'label.chat.deleted': INSTANCE_CHAT,
  'poll.vote': PEER,
  'poll.vote.failed': PEER,
  'presence.update': INSTANCE_CHAT,
  'message.waiting': PEER,
  'message.ack.group': SAMPLE_GROUP,
  'group.v2.join': SAMPLE_GROUP,
  'group.v2.leave': SAMPLE_GROUP,
  'group.v2.update': SAMPLE_GROUP,
  'group.v2.participants': SAMPLE_GROUP,
  'chat.archive': INSTANCE_CHAT,
  'event.response': PEER,
  'event.response.failed': PEER,
  'engine.event': INSTANCE_CHAT,
  'webhook.disabled': INSTANCE_CHAT,
  'webhook.failing': INSTANCE_CHAT,
  'webhook.recovered': INSTANCE_CHAT,
  'delivery.failed': INSTANCE_CHAT,
};

test('every kind in the catalog yields a key for its sample, the chat it plays in', () => {
  assert.deepEqual(Object.keys(SAMPLE_CHATS).sort(), [...EVENT_KINDS].sort(), 'one row per kind');
  for (const kind of EVENT_KINDS) {
    const key = chatKey(kind, samplePayload(kind));
    assert.ok(typeof key === 'string' && key !== '', `${kind}: a non-empty key`);
    assert.equal(key, SAMPLE_CHATS[kind], kind);
  }
});

/** Five events on one message, as each engine shapes them; every key must be the same. */
function sameKeys(events: [string, Obj][], chat: string): void {
  for (const [kind, payload] of events) assert.equal(chatKey(kind, payload), chat, kind);
}

test('WEBJS: a message, its ack, reaction, edit and revoke share the chat key (@c.us, true_/false_ ids)', () => {
  const out = `true_${ALICE}_3EB0D1E2F3A4B5C6D7E8`;
  sameKeys(
    [
      ['message.any', { id: out, from: ME, to: ALICE, fromMe: true, body: 'See you' }],
      ['message.ack', { id: out, from: ME, to: ALICE, fromMe: true, ack: 3 }],
      [
        'message.reaction',
        { id: `false_${ALICE}_R1`, from: ALICE, to: ME, reaction: { text: '👍', messageId: out } },
      ],
      [
        'message.edited',
        { id: out, from: ME, to: ALICE, fromMe: true, editedMessageId: '3EB0D1E2F3A4B5C6D7E8' },
      ],
      ['message.revoked', { after: { id: out, from: ME, to: ALICE, fromMe: true }, before: null }],
      ['message.reaction', { reaction: { text: '❤️', messageId: out } }], // only the message it concerns
      ['message.revoked', { after: null, before: { id: out, body: 'See you' }, revokedMessageId: out }],
    ],
    ALICE,
  );
});

test('NOWEB and GOWS: the same chat named @s.whatsapp.net, with a device, or @c.us is one key', () => {
  const id = '3EB0D9C8B7A6F5E4D3C2';
  sameKeys(
    [
      // Engine-native ids without WAHA's id: the chat is in from/to, in the engine's own spelling.
      ['message', { id, from: ALICE_NET, to: '14155550100:7@s.whatsapp.net', fromMe: false }],
      ['message.any', { id, from: '14155550100:7@s.whatsapp.net', to: ALICE_NET, fromMe: true }],
      ['message.any', { id: `true_${ALICE}_${id}`, from: ALICE, fromMe: true }], // NOWEB: `from` is the chat
      ['message.ack', { id: `true_${ALICE}_${id}`, from: ALICE, to: null, fromMe: true, ack: 2 }],
      ['message.ack', { id, from: ALICE_NET, fromMe: true, ack: 3 }],
      [
        'message.reaction',
        { from: ALICE_NET, fromMe: false, reaction: { text: '', messageId: `true_${ALICE}_${id}` } },
      ],
      ['message.edited', { id: `false_${ALICE}_3EB0EDIT`, from: ALICE, editedMessageId: id }],
      [
        'message.revoked',
        { after: { id: `false_${ALICE}_3EB0REV`, from: ALICE }, before: null, revokedMessageId: id },
      ],
      ['message.revoked', { from: ALICE_NET, to: ME, revokedMessageId: id }], // the flat shape
      ['message.unknown', { message_id: 'msg_1', to: '14155550123', type: 'text', error_code: 'TIMEOUT' }],
    ],
    ALICE,
  );
});

test('a group message and its group ack share the group, whatever participant ends the id', () => {
  const id = '3EB0B1C2D3E4F5A6B7C8';
  sameKeys(
    [
      [
        'message',
        { id: `false_${GROUP}_${id}_${ALICE}`, from: GROUP, participant: ALICE, to: ME, fromMe: false },
      ],
      ['message', { id: `true_${GROUP}_${id}_${ME}`, from: ME, to: GROUP, fromMe: true }],
      [
        'message.ack.group',
        { id: `true_${GROUP}_${id}_${ME}`, from: GROUP, to: '987@lid', participant: '987@lid' },
      ],
      ['message.ack.group', { id: `true_${GROUP}_${id}_98765432109876@lid`, fromMe: true, ack: 3 }],
      [
        'message.reaction',
        { from: GROUP, participant: ALICE, reaction: { text: '👍', messageId: `true_${GROUP}_${id}` } },
      ],
      // Without WAHA's id the group is the chat on either side, and the member on the other is not.
      ['message.ack.group', { id, from: GROUP, to: '98765432109876@lid', fromMe: true, ack: 4 }],
      ['message', { id, from: ME, to: GROUP, fromMe: true }],
      ['message', { id, from: ALICE, to: GROUP, participant: ALICE, fromMe: false }],
    ],
    GROUP,
  );
});

test('the session’s own message goes to `to`, another’s to `from`; chatId and the id’s chat come first', () => {
  const rows: [Obj, string, string][] = [
    [{ id: 'custom-1', from: ME, to: ALICE, fromMe: true }, ALICE, 'own: `to`'],
    [{ id: 'custom-2', from: ALICE, to: ME, fromMe: false }, ALICE, 'another’s: `from`'],
    [{ id: 'custom-3', from: ALICE, to: ME }, ALICE, 'no fromMe: not the session’s'],
    [{ id: 'custom-4', from: ALICE, fromMe: true }, ALICE, 'own without `to` (NOWEB, GOWS): `from`'],
    [{ id: `false_${ALICE}_X`, from: '1@c.us', to: ME, fromMe: true }, ALICE, 'the id before from/to'],
    [{ id: 'x', chatId: GROUP, from: ALICE, fromMe: false }, GROUP, 'chatId before all'],
    [{ id: 'x', _data: { id: { remote: ALICE_NET } }, fromMe: false }, ALICE, 'WEBJS’s _data.id.remote'],
  ];
  for (const [payload, chat, why] of rows) assert.equal(chatKey('message.any', payload), chat, why);
});

test('hidden ids, groups, channels and stories keep their spelling; a device suffix goes', () => {
  const key = (from: string) => chatKey('message', { id: 'x', from, fromMe: false });
  assert.equal(key('98765432109876@lid'), '98765432109876@lid');
  assert.equal(key('98765432109876:3@lid'), '98765432109876@lid');
  assert.equal(key(GROUP), GROUP);
  assert.equal(key('111111111111111111@newsletter'), '111111111111111111@newsletter');
  assert.equal(key(STORY), STORY);
  assert.notEqual(key('98765432109876@lid'), key('98765432109876@c.us'), 'a hidden id is not a phone');
});

test('kinds of the whole instance get the instance key even when they name a chat', () => {
  const payloads: [string, Obj][] = [
    ['session.status', { status: 'WORKING', chatId: ALICE }],
    ['call.received', { id: 'C1', from: ALICE, _data: { chatId: ALICE_NET } }],
    ['label.chat.added', { labelId: '6', chatId: ALICE }],
    ['chat.archive', { id: ALICE, archived: true }],
    ['engine.event', { event: 'events.Receipt', data: { Chat: ALICE_NET } }],
    ['my.custom.kind', { id: `false_${ALICE}_X`, from: ALICE, chatId: ALICE }],
  ];
  for (const [kind, payload] of payloads) assert.equal(chatKey(kind, payload), INSTANCE_CHAT, kind);
});

test('a payload with no chat in it yields the instance key, never an error', () => {
  const kinds = [...EVENT_KINDS, 'group.v2.participants.join-request', 'message.future', 'custom'];
  const payloads: unknown[] = [
    null,
    undefined,
    [],
    [{ id: `false_${ALICE}_X` }],
    'false_14155550123@c.us_X',
    42,
    {},
    { id: 7, from: 8, to: [ALICE], chatId: { remote: 1 }, fromMe: 'yes' },
    { id: '', from: '', to: 'me', fromMe: true }, // WAHA's `me` names no chat
    { id: 'true__X', from: 'me', participant: ALICE },
    { id: { remote: null, _serialized: 5 }, _data: 'x', group: 'x', chatId: '' },
    { reaction: 'x', after: 'x', before: [], poll: 1, vote: null, eventCreationKey: [] },
    {
      reaction: { messageId: 'bare' },
      editedMessageId: 'bare',
      revokedMessageId: 'bare',
      group: { id: null },
    },
  ];
  for (const kind of kinds) {
    for (const payload of payloads) {
      assert.equal(chatKey(kind, payload), INSTANCE_CHAT, `${kind} ${JSON.stringify(payload)}`);
    }
  }
});
