import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ACK_NAMES,
  concernsStatus,
  EVENT_KINDS,
  isEventKind,
  MEDIA_STATUSES,
  SESSION_STATUSES,
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
  test('EVENT_KINDS is SPEC §7 in order', () => {
    const spec =
      'session.status message message.any message.ack message.reaction message.edited message.revoked ' +
      'message.unknown group.join group.leave group.update group.participants call.received call.accepted ' +
      'call.rejected label.upsert label.deleted label.chat.added label.chat.deleted poll.vote ' +
      'poll.vote.failed presence.update';
    assert.deepEqual(EVENT_KINDS, spec.split(' '));
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
    for (const k of ['*', 'mesage', 'Message', '', 'group', 'message.'])
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
  for (const kind of EVENT_KINDS) {
    test(`sample of ${kind} passes`, () => assert.deepEqual(validatePayload(kind, samplePayload(kind)), []));
  }
  // [case, kind, patch of the kind's sample]
  const valid: [string, string, Obj][] = [
    ['empty body', 'message', { body: '' }],
    ['media null with hasMedia false', 'message', { media: null }],
    ['unnamed fields pass through', 'message', { quoted: { id: 'x' }, _data: [1, 2], media_note: 7 }],
    ['engine-stored ready media', 'message', media(READY)],
    ['expires_at with milliseconds', 'message', ready({ expires_at: '2026-11-21T10:00:00.123Z' })],
    ['only a media_id reference', 'message', media({ media_id: 'med_01JD5Q7H2K9X4M8N3P6R0T' })],
    [
      'a reference saying ready',
      'message',
      media({ media_id: 'med_01JD5Q7H2K9X4M8N3P6R0T', status: 'ready' }),
    ],
    ['a sent message leaves the status out', 'message.any', { media: { mimetype: 'image/jpeg' } }],
    ['too_large without a file', 'message', media({ status: 'too_large' })],
    ['failed without a file', 'message', media({ status: 'failed', mimetype: 'video/mp4' })],
    ['unavailable without a file', 'message', media({ status: 'unavailable' })],
    ['incoming message as message.any', 'message.any', { ...samplePayload('message'), media: undefined }],
    ['empty reaction text removes it', 'message.reaction', { reaction: { text: '', messageId: 'm1' } }],
    ['revoked without id', 'message.revoked', { id: undefined }],
    ['session.status without phone', 'session.status', { phone: undefined }],
    ['session.status phone null', 'session.status', { status: 'STOPPED', phone: null }],
    ['other kinds take any object', 'group.join', { group: 'anything', extra: [1] }],
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

  // kind → [case, patch of the kind's sample, field after 'payload.', rule]
  const cases: Record<string, [string, Obj, string, RegExp][]> = {
    message: [
      ['id missing', { id: undefined }, 'id', /^is required$/],
      ['id empty', { id: '' }, 'id', /non-empty string/],
      ['from not a string', { from: 15557654321 }, 'from', /string/],
      ['from_phone with +', { from_phone: '+15557654321' }, 'from_phone', /^must contain digits only$/],
      ['from_phone a number', { from_phone: 15557654321 }, 'from_phone', /must be a string/],
      ['fromMe a string', { fromMe: 'false' }, 'fromMe', /must be a boolean/],
      ['body missing', { body: undefined }, 'body', /is required/],
      ['hasMedia missing', { hasMedia: undefined }, 'hasMedia', /is required/],
      ['hasMedia a string', { hasMedia: 'no' }, 'hasMedia', /must be a boolean/],
      ['outgoing as message', { fromMe: true }, 'fromMe', /publish an outgoing one as message.any only/],
      ['hasMedia true, no media', { hasMedia: true }, 'media', /^must be present when hasMedia is true$/],
      ['hasMedia false, media', { media: READY }, 'media', /^must be absent when hasMedia is false$/],
      // media (seed 2.5, SPEC §7)
      ['media not an object', media(['x']), 'media', /must be an object/],
      ['media empty', media({}), 'media.status', /is required/],
      ['media status unknown', ready({ status: 'stored' }), 'media.status', /one of ready, too_large/],
      ['media status missing', ready({ status: undefined }), 'media.status', /is required/],
      ['media_id prefix', media({ media_id: 'file_123' }), 'media.media_id', /starting with "med_"/],
      ['mimetype a number', ready({ mimetype: 7 }), 'media.mimetype', /string/],
      ['url not http(s)', ready({ url: 'ftp://media.example.com/a' }), 'media.url', /absolute http\(s\) URL/],
      ['url relative', ready({ url: '/files/a.jpg' }), 'media.url', /absolute http\(s\) URL/],
      ['expires_at not ISO', ready({ expires_at: '21/11/2026 10:00' }), 'media.expires_at', /ISO 8601 UTC/],
      ['expires_at not UTC', ready({ expires_at: '2026-11-21T10:00:00+02:00' }), 'media.expires_at', /UTC/],
      ['expires_at epoch ms', ready({ expires_at: 1795255200000 }), 'media.expires_at', /ISO 8601/],
      ['expires_at no such day', ready({ expires_at: '2026-02-30T10:00:00Z' }), 'media.expires_at', /ISO/],
      ['url with failed', ready({ status: 'failed' }), 'media.url', /absent when status is failed/],
      ['url with too_large', ready({ status: 'too_large' }), 'media.url', /absent when status is too_large/],
      ['url with unavailable', ready({ status: 'unavailable' }), 'media.url', /absent when status/],
      ['url without mimetype', ready({ mimetype: undefined }), 'media.mimetype', /required when url/],
      ['url without media_id', ready({ media_id: undefined }), 'media.media_id', /required when url/],
      ['url without expires_at', ready({ expires_at: undefined }), 'media.expires_at', /required when url/],
      ['ready without url', ready({ url: undefined }), 'media.url', /required when status is ready/],
      [
        'a reference with a mimetype',
        media({ media_id: 'med_01JD5Q7H2K9X', mimetype: 'a/b' }),
        'media.status',
        /only a media_id/,
      ],
      ['outgoing media on incoming', media({ status: 'outgoing' }), 'media.status', /fromMe true/],
    ],
    'message.any': [
      ['from_phone with spaces', { from_phone: '1 555 000' }, 'from_phone', /digits only/],
      ['media without hasMedia', { hasMedia: false }, 'media', /absent when hasMedia is false/],
      ['outgoing with a url', { media: { ...READY, status: 'outgoing' } }, 'media.url', /absent when status/],
      [
        'a sent message with a url',
        { media: { ...READY, status: undefined } },
        'media.url',
        /absent when status is outgoing/,
      ],
      [
        'an upload on a sent message',
        { media: { media_id: 'med_01JD5Q7H2K9X' } },
        'media.media_id',
        /no copy of media the session sent/,
      ],
    ],
    'message.ack': [
      ['ack out of range', { ack: 5 }, 'ack', /^must be one of -1, 0, 1, 2, 3, 4$/],
      ['ack a string', { ack: '3' }, 'ack', /one of -1/],
      ['ack not an integer', { ack: 2.5 }, 'ack', /one of -1/],
      ['ackName wrong for ack', { ack: 2 }, 'ackName', /^must be "DEVICE" for ack 2$/],
      ['ackName unknown', { ackName: 'SEEN' }, 'ackName', /one of ERROR, PENDING/],
      ['to missing', { to: undefined }, 'to', /is required/],
    ],
    'message.reaction': [
      ['reaction missing', { reaction: undefined }, 'reaction', /is required/],
      ['reaction a string', { reaction: '👍' }, 'reaction', /must be an object/],
      ['text missing', { reaction: { messageId: 'm1' } }, 'reaction.text', /is required/],
      ['text a number', { reaction: { text: 1, messageId: 'm1' } }, 'reaction.text', /string/],
      ['messageId empty', { reaction: { text: '', messageId: '' } }, 'reaction.messageId', /non-empty/],
      ['from missing', { from: undefined }, 'from', /is required/],
    ],
    'message.edited': [
      ['editedMessageId missing', { editedMessageId: undefined }, 'editedMessageId', /is required/],
      ['body a number', { body: 1 }, 'body', /string/],
      ['id missing', { id: undefined }, 'id', /is required/],
    ],
    'message.revoked': [
      ['revokedMessageId missing', { revokedMessageId: undefined }, 'revokedMessageId', /is required/],
      ['id a number', { id: 42 }, 'id', /string/],
      ['to missing', { to: undefined }, 'to', /is required/],
    ],
    'message.unknown': [
      ['message_id prefix', { message_id: 'abc' }, 'message_id', /starting with "msg_"/],
      ['client_reference missing', { client_reference: undefined }, 'client_reference', /is required/],
      ['to with +', { to: '+15557654321' }, 'to', /digits only/],
      ['type missing', { type: undefined }, 'type', /is required/],
      ['error_code other', { error_code: 'CRASHED' }, 'error_code', /^must be one of TIMEOUT, WORKER_DIED$/],
    ],
    'session.status': [
      ['status unknown', { status: 'RUNNING' }, 'status', /one of STOPPED, STARTING, SCAN_QR_CODE, WORKING/],
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
    const errors = validatePayload('message', sample('message', { from: undefined }), 'events[3].');
    assert.deepEqual(errors, [{ field: 'events[3].payload.from', message: 'is required' }]);
    assert.equal(validatePayload('message', 1, 'events[0].')[0].field, 'events[0].payload');
    assert.equal(validatePayload('nope', {}, 'events[1].')[0].field, 'events[1].event');
  });
  test('all errors are collected, not just the first', () => {
    const errors = validatePayload('message', { id: 1, from_phone: 'abc', fromMe: true, hasMedia: true });
    assert.deepEqual(
      errors.map((e) => e.field),
      ['payload.id', 'payload.from', 'payload.from_phone', 'payload.body', 'payload.fromMe', 'payload.media'],
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
  const table: [Obj, boolean][] = [
    [{ from: 'status@broadcast' }, true],
    [{ to: 'status@broadcast' }, true],
    [{ chat_id: 'status@broadcast' }, true],
    [{ from: '15557654321@c.us', to: '15550001111@c.us' }, false],
    [{ body: 'status@broadcast' }, false],
    [{}, false],
  ];
  for (const [payload, expected] of table) {
    test(JSON.stringify(payload), () => assert.equal(concernsStatus(payload), expected));
  }
});
