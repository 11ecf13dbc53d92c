import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import {
  ACK_NAMES,
  concernsStatus,
  EVENT_KINDS,
  isEventKind,
  MEDIA_STATUSES,
  SESSION_STATUSES,
  validateKnownPayload,
  validatePayload,
} from '../../src/domain/events.ts';
import { samplePayload } from '../../src/domain/samples.ts';

type Obj = Record<string, unknown>;
/** What a publisher would send: a JSON round trip drops fields set to undefined, at any depth. */
const json = (v: unknown): Obj => JSON.parse(JSON.stringify(v));
const sample = (kind: string, patch: Obj = {}) => json({ ...samplePayload(kind), ...patch });

const READY = {
  status: 'ready',
  mimetype: 'image/jpeg',
  media_id: 'med_01JD5Q7H2K9X4M8N3P6R0T1V2W',
  url: 'https://media.example.com/files/med_01JD5Q7H2K9X4M8N3P6R0T1V2W',
  expires_at: '2026-11-21T10:00:00Z',
};
/** Patches that give the incoming sample a media object. */
const media = (m: unknown) => ({ hasMedia: true, media: m });
const ready = (patch: Obj) => media({ ...READY, ...patch });

describe('catalog', () => {
  test('EVENT_KINDS: the seed kinds, the further ones, then the rest of what WAHA emits', () => {
    const kinds =
      'session.status message message.any message.ack message.reaction message.edited message.revoked ' +
      'message.unknown group.join group.leave group.update group.participants call.received call.accepted ' +
      'call.rejected label.upsert label.deleted label.chat.added label.chat.deleted poll.vote ' +
      'poll.vote.failed presence.update message.waiting message.ack.group group.v2.join group.v2.leave ' +
      'group.v2.update group.v2.participants chat.archive event.response event.response.failed engine.event ' +
      'webhook.disabled webhook.failing webhook.recovered delivery.failed';
    assert.deepEqual(EVENT_KINDS, kinds.split(' '));
  });
  test('enums', () => {
    assert.deepEqual(SESSION_STATUSES, ['STOPPED', 'STARTING', 'SCAN_QR_CODE', 'WORKING', 'FAILED']);
    assert.deepEqual(MEDIA_STATUSES, ['ready', 'too_large', 'failed', 'outgoing', 'unavailable']);
    assert.deepEqual(ACK_NAMES, {
      [-1]: 'ERROR',
      0: 'PENDING',
      1: 'SERVER',
      2: 'DEVICE',
      3: 'READ',
      4: 'PLAYED',
    });
    assert.throws(() => (SESSION_STATUSES as string[]).push('X'), TypeError);
  });
  test('isEventKind', () => {
    for (const k of EVENT_KINDS) assert.equal(isEventKind(k), true, k);
    for (const k of ['*', 'mesage', 'Message', '', 'group', 'message.', 'state.change'])
      assert.equal(isEventKind(k), false, k);
  });
  test('samplePayload returns a fresh copy and refuses unknown kinds', () => {
    const a = samplePayload('message');
    a.body = 'changed';
    assert.notEqual(samplePayload('message').body, 'changed');
    assert.throws(() => samplePayload('mesage'), RangeError);
  });
});

describe('valid payloads', () => {
  for (const kind of EVENT_KINDS.filter((k) => !OPERATIONAL_KINDS.includes(k))) {
    test(`sample of ${kind} passes`, () => assert.deepEqual(validatePayload(kind, samplePayload(kind)), []));
  }
  test("Herald's operational kinds are refused to whoever publishes them, naming the field", () => {
    for (const kind of OPERATIONAL_KINDS) {
      assert.deepEqual(validatePayload(kind, samplePayload(kind), 'events[2].'), [
        {
          field: 'events[2].event',
          message: `"${kind}" is sent by Herald itself, about its own deliveries, and cannot be published`,
        },
      ]);
    }
  });
  // [case, kind, patch of the kind's sample]: what real engines send, accepted for its shape
  const valid: [string, string, Obj][] = [
    ['empty body', 'message', { body: '' }],
    ['body null (a sticker)', 'message', { body: null }],
    ['from_phone left out (engines never send it)', 'message', { from_phone: undefined }],
    ['no from, to or hasMedia', 'message', { from: undefined, to: undefined, hasMedia: undefined }],
    [
      'a group message with its participant',
      'message',
      { from: '120363041234567890@g.us', participant: '4917@c.us' },
    ],
    ['an incoming message with fromMe true (self-chat)', 'message', { fromMe: true }],
    ['media null with hasMedia false', 'message', { media: null }],
    ['hasMedia true and media null: not downloaded', 'message', { hasMedia: true, media: null }],
    [
      'unnamed fields pass through',
      'message',
      { quoted: { id: 'x' }, _data: [1, 2], media_note: 7, vCards: [] },
    ],
    ['a float timestamp', 'message', { timestamp: 1710481111.853 }],
    ['engine-stored ready media', 'message', media(READY)],
    ['expires_at with milliseconds', 'message', ready({ expires_at: '2026-11-21T10:00:00.123Z' })],
    ['expires_at with an offset', 'message', ready({ expires_at: '2026-11-21T12:00:00+02:00' })],
    ['only a media_id reference', 'message', media({ media_id: 'med_01JD5Q7H2K9X4M8N3P6R0T' })],
    [
      'a reference saying ready',
      'message',
      media({ media_id: 'med_01JD5Q7H2K9X4M8N3P6R0T', status: 'ready' }),
    ],
    [
      'an upload on a sent message (delivered as outgoing)',
      'message.any',
      media({ media_id: 'med_01JD5Q7H2K9X' }),
    ],
    [
      'WAHA media with a url',
      'message',
      media({ url: 'http://waha:3000/api/files/x.jpg', mimetype: 'image/jpeg', filename: null, error: null }),
    ],
    [
      'WAHA media with an error',
      'message',
      media({ url: null, mimetype: 'image/jpeg', error: { message: 'x' } }),
    ],
    [
      'WAHA media with S3 attributes',
      'message',
      media({ url: 'https://s3.example.com/b/k.oga', mimetype: 'audio/ogg', s3: { Bucket: 'b', Key: 'k' } }),
    ],
    ['a sent message leaves the status out', 'message.any', { media: { mimetype: 'image/jpeg' } }],
    ['too_large without a file', 'message', media({ status: 'too_large' })],
    ['failed without a file', 'message', media({ status: 'failed', mimetype: 'video/mp4' })],
    ['unavailable without a file', 'message', media({ status: 'unavailable' })],
    ['empty reaction text removes it', 'message.reaction', { reaction: { text: '', messageId: 'm1' } }],
    [
      'a reaction without from, to or id',
      'message.reaction',
      { id: undefined, from: undefined, to: undefined },
    ],
    ['an ack without to', 'message.ack', { to: undefined }],
    ['ackName UNKNOWN', 'message.ack', { ackName: 'UNKNOWN' }],
    ['ack null', 'message.ack', { ack: null, ackName: 'UNKNOWN' }],
    ['an edit without editedMessageId', 'message.edited', { editedMessageId: undefined }],
    ['WAHA revoke with before null', 'message.revoked', {}],
    ['WAHA revoke with after null', 'message.revoked', { after: null, before: { id: 'x' } }],
    ['WAHA revoke without revokedMessageId', 'message.revoked', { revokedMessageId: undefined }],
    [
      'the flat revoke',
      'message.revoked',
      { after: undefined, before: undefined, from: 'a@c.us', to: 'b@c.us' },
    ],
    ['session.status without phone', 'session.status', { phone: undefined }],
    ['session.status phone null', 'session.status', { status: 'STOPPED', phone: null }],
    ['a status no list names', 'session.status', { status: 'PASSKEY_REQUIRED', data: { challenge: 'x' } }],
    ['other kinds take any object', 'group.join', { group: 'anything', extra: [1] }],
    ['WAHA kinds take any object', 'group.v2.participants', { type: 'promote' }],
  ];
  for (const [name, kind, patch] of valid) {
    test(name, () => assert.deepEqual(validatePayload(kind, sample(kind, patch)), []));
  }
  test('each ack with its name', () => {
    for (const [ack, ackName] of Object.entries(ACK_NAMES)) {
      assert.deepEqual(
        validatePayload('message.ack', sample('message.ack', { ack: Number(ack), ackName })),
        [],
      );
    }
  });
});

describe('invalid payloads name the field and the rule', () => {
  test('payload must be a JSON object', () => {
    for (const payload of [[], null, 'hi', 3, undefined]) {
      assert.deepEqual(validatePayload('presence.update', payload), [
        { field: 'payload', message: 'must be a JSON object' },
      ]);
    }
  });
  test('unknown kind', () => {
    assert.deepEqual(validatePayload('mesage', {}), [
      { field: 'event', message: 'unknown event kind "mesage"' },
    ]);
  });
  test('an engine kind outside the catalog has no rules of its own, but known kinds keep theirs', () => {
    assert.deepEqual(validateKnownPayload('state.change', { anything: 1 }), []);
    assert.equal(validateKnownPayload('message', { fromMe: false })[0].field, 'payload.id');
  });

  // kind → [case, patch of the kind's sample, field after 'payload.', rule]
  const cases: Record<string, [string, Obj, string, RegExp][]> = {
    message: [
      ['id missing', { id: undefined }, 'id', /^is required$/],
      ['id empty', { id: '' }, 'id', /non-empty string/],
      ['fromMe missing', { fromMe: undefined }, 'fromMe', /^is required$/],
      ['fromMe a string', { fromMe: 'false' }, 'fromMe', /must be true or false/],
      ['from not a string', { from: 15557654321 }, 'from', /string/],
      ['participant not a string', { participant: 7 }, 'participant', /string/],
      ['from_phone with +', { from_phone: '+15557654321' }, 'from_phone', /^must contain digits only$/],
      ['from_phone a number', { from_phone: 15557654321 }, 'from_phone', /must be a string/],
      ['body a number', { body: 7 }, 'body', /string/],
      ['hasMedia a string', { hasMedia: 'no' }, 'hasMedia', /must be true or false/],
      ['hasMedia false, media', { media: READY }, 'media', /^must be absent or null when hasMedia is false$/],
      // media (seed 2.5)
      ['media not an object', media(['x']), 'media', /must be an object or null/],
      ['media status unknown', ready({ status: 'stored' }), 'media.status', /one of ready, too_large/],
      ['media_id prefix', media({ media_id: 'file_123' }), 'media.media_id', /starting with "med_"/],
      ['mimetype a number', ready({ mimetype: 7 }), 'media.mimetype', /string/],
      ['url not http(s)', ready({ url: 'ftp://media.example.com/a' }), 'media.url', /absolute http\(s\) URL/],
      ['url relative', ready({ url: '/files/a.jpg' }), 'media.url', /absolute http\(s\) URL/],
      ['expires_at not ISO', ready({ expires_at: '21/11/2026 10:00' }), 'media.expires_at', /ISO 8601/],
      [
        'expires_at without offset',
        ready({ expires_at: '2026-11-21T10:00:00' }),
        'media.expires_at',
        /offset/,
      ],
      ['expires_at epoch ms', ready({ expires_at: 1795255200000 }), 'media.expires_at', /ISO 8601/],
      ['expires_at no such day', ready({ expires_at: '2026-02-30T10:00:00Z' }), 'media.expires_at', /ISO/],
      ['url with failed', ready({ status: 'failed' }), 'media.url', /absent when status is failed/],
      ['url with too_large', ready({ status: 'too_large' }), 'media.url', /absent when status is too_large/],
      ['url with unavailable', ready({ status: 'unavailable' }), 'media.url', /absent when status/],
      ['url without mimetype', ready({ mimetype: undefined }), 'media.mimetype', /required when url/],
      ['url without media_id', ready({ media_id: undefined }), 'media.media_id', /required when url/],
      ['url without expires_at', ready({ expires_at: undefined }), 'media.expires_at', /required when url/],
      ['ready without url', ready({ url: undefined }), 'media.url', /required when status is ready/],
      ['outgoing media on incoming', media({ status: 'outgoing' }), 'media.status', /fromMe true/],
      ['WAHA media url relative', media({ url: 'api/files/x.jpg' }), 'media.url', /absolute http\(s\) URL/],
      ['WAHA media filename a number', media({ url: 'http://w/x', filename: 7 }), 'media.filename', /string/],
    ],
    'message.any': [
      ['from_phone with spaces', { from_phone: '1 555 000' }, 'from_phone', /digits only/],
      ['media without hasMedia', { hasMedia: false }, 'media', /absent or null when hasMedia is false/],
      ['outgoing with a url', { media: { ...READY, status: 'outgoing' } }, 'media.url', /absent when status/],
    ],
    'message.ack': [
      ['id missing', { id: undefined }, 'id', /is required/],
      ['ack out of range', { ack: 5 }, 'ack', /^must be an integer from -1 \(ERROR\) to 4 \(PLAYED\)$/],
      ['ack a string', { ack: '3' }, 'ack', /integer from -1/],
      ['ack not an integer', { ack: 2.5 }, 'ack', /integer from -1/],
      ['ackName a number', { ackName: 3 }, 'ackName', /string/],
      ['to a number', { to: 7 }, 'to', /string/],
    ],
    'message.reaction': [
      ['reaction missing', { reaction: undefined }, 'reaction', /is required/],
      ['reaction a string', { reaction: '👍' }, 'reaction', /must be an object/],
      ['text missing', { reaction: { messageId: 'm1' } }, 'reaction.text', /is required/],
      ['text a number', { reaction: { text: 1, messageId: 'm1' } }, 'reaction.text', /string/],
      ['messageId empty', { reaction: { text: '', messageId: '' } }, 'reaction.messageId', /non-empty/],
    ],
    'message.edited': [
      ['body a number', { body: 1 }, 'body', /string/],
      ['id missing', { id: undefined }, 'id', /is required/],
      ['editedMessageId a number', { editedMessageId: 1 }, 'editedMessageId', /string/],
    ],
    'message.revoked': [
      ['after a string', { after: 'x' }, 'after', /message object or null/],
      ['revokedMessageId a number', { revokedMessageId: 1 }, 'revokedMessageId', /string/],
      [
        'the flat shape without revokedMessageId',
        { after: undefined, before: undefined, revokedMessageId: undefined },
        'revokedMessageId',
        /is required/,
      ],
    ],
    'message.unknown': [
      ['message_id prefix', { message_id: 'abc' }, 'message_id', /starting with "msg_"/],
      ['client_reference missing', { client_reference: undefined }, 'client_reference', /is required/],
      ['to with +', { to: '+15557654321' }, 'to', /digits only/],
      ['type missing', { type: undefined }, 'type', /is required/],
      ['error_code other', { error_code: 'CRASHED' }, 'error_code', /^must be one of TIMEOUT, WORKER_DIED$/],
    ],
    'session.status': [
      ['status in lower case', { status: 'working' }, 'status', /upper case, such as WORKING/],
      ['status a number', { status: 2 }, 'status', /upper case/],
      ['status missing', { status: undefined }, 'status', /is required/],
      ['phone with dashes', { phone: '1-555-000' }, 'phone', /digits only/],
    ],
  };
  for (const [kind, rows] of Object.entries(cases)) {
    for (const [name, patch, field, rule] of rows) {
      test(`${kind}: ${name}`, () => {
        const errors = validatePayload(kind, sample(kind, patch));
        assert.deepEqual(
          errors.map((e) => e.field),
          [`payload.${field}`],
          JSON.stringify(errors),
        );
        assert.match(errors[0].message, rule);
      });
    }
  }
});

describe('error reporting', () => {
  test('prefix is prepended to every field', () => {
    const errors = validatePayload('message', sample('message', { id: undefined }), 'events[3].');
    assert.deepEqual(errors, [{ field: 'events[3].payload.id', message: 'is required' }]);
    assert.equal(validatePayload('message', 1, 'events[0].')[0].field, 'events[0].payload');
    assert.equal(validatePayload('nope', {}, 'events[1].')[0].field, 'events[1].event');
  });
  test('all errors are collected, not just the first', () => {
    const errors = validatePayload('message', {
      id: 1,
      from: 2,
      from_phone: 'abc',
      fromMe: 'yes',
      hasMedia: 1,
    });
    assert.deepEqual(
      errors.map((e) => e.field),
      ['payload.id', 'payload.fromMe', 'payload.from', 'payload.from_phone', 'payload.hasMedia'],
    );
  });
  test('all media errors are collected', () => {
    const errors = validatePayload('message', sample('message', ready({ media_id: 'x', url: 'nope' })));
    assert.deepEqual(
      errors.map((e) => e.field),
      ['payload.media.media_id', 'payload.media.url'],
    );
  });
});

describe('concernsStatus', () => {
  const table: [unknown, boolean][] = [
    [{ from: 'status@broadcast' }, true],
    [{ to: 'status@broadcast' }, true],
    [{ chat_id: 'status@broadcast' }, true],
    [{ chatId: 'status@broadcast' }, true],
    [{ participant: 'status@broadcast' }, true],
    [{ after: { from: 'status@broadcast' }, before: null }, true],
    [{ after: null, before: { from: 'status@broadcast' } }, true],
    [{ from: '15557654321@c.us', to: '15550001111@c.us' }, false],
    [{ body: 'status@broadcast' }, false],
    [{ after: 'status@broadcast' }, false],
    [{}, false],
    ['status@broadcast', false],
    [null, false],
  ];
  for (const [payload, expected] of table) {
    test(JSON.stringify(payload), () => assert.equal(concernsStatus(payload), expected));
  }
});
