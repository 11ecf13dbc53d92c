/** The pure step from an accepted payload to the seed's delivery format: from_phone, media states, the phone. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toUtc } from '../../src/domain/iso-time.ts';
import { phoneOf } from '../../src/domain/jid.ts';
import { normalise } from '../../src/domain/normalise.ts';

type Obj = Record<string, unknown>;
const msg = (p: Obj): Obj => ({ id: 'm1', fromMe: false, ...p });

describe('from_phone: the sender phone id’s digits', () => {
  const table: [string, Obj, string | undefined][] = [
    ['a private chat (WEBJS)', { from: '491701234567@c.us' }, '491701234567'],
    ['a private chat (NOWEB, GOWS)', { from: '491701234567@s.whatsapp.net' }, '491701234567'],
    ['a device suffix', { from: '491701234567:12@s.whatsapp.net' }, '491701234567'],
    ['a group: its participant', { from: '120363041234567890@g.us', participant: '4917012@c.us' }, '4917012'],
    [
      'a story: its participant',
      { from: 'status@broadcast', participant: '4917012@s.whatsapp.net' },
      '4917012',
    ],
    ['a hidden (@lid) sender', { from: '123456789012345@lid' }, undefined],
    ['a group with a hidden participant', { from: '1203630@g.us', participant: '99999@lid' }, undefined],
    ['a channel', { from: '120363000000000000@newsletter' }, undefined],
    ['no from at all', {}, undefined],
    ['the engine’s own from_phone is kept', { from: '4917@c.us', from_phone: '4900' }, '4900'],
  ];
  for (const [name, payload, expected] of table) {
    test(name, () => {
      const { payload: out } = normalise('message', msg(payload), null);
      assert.equal(out.from_phone, expected);
      assert.equal('from_phone' in out, expected !== undefined, 'absent, not null, when there is none');
    });
  }
  test('the session’s own message: its phone when the engine said it (NOWEB and GOWS put the recipient in from)', () => {
    const sent = msg({ fromMe: true, from: '491701234567@c.us' });
    assert.equal(normalise('message.any', sent, '15550001111').payload.from_phone, '15550001111');
    assert.equal(
      normalise('message.any', sent, null).payload.from_phone,
      '491701234567',
      'WEBJS: from is the session',
    );
  });
  test('only message kinds get it, and the published payload is never changed in place', () => {
    const payload = msg({ from: '491701234567@c.us' });
    assert.equal(normalise('message.ack', payload, null).payload, payload);
    assert.equal(normalise('message.any', payload, null).payload.from_phone, '491701234567');
    assert.equal(payload.from_phone, undefined);
  });
  test('phoneOf', () => {
    assert.equal(phoneOf('15550001111@c.us'), '15550001111');
    for (const jid of ['me', 'status@broadcast', '1234@lid', 7, null, '+4917@c.us', '@c.us']) {
      assert.equal(phoneOf(jid), null, String(jid));
    }
  });
});

describe('media in the seed’s states', () => {
  const url = 'http://waha:3000/api/files/true_x.jpg';
  const table: [string, Obj, Obj | undefined, Obj | null][] = [
    // [case, payload fields, delivered media (undefined: none), download]
    [
      'a url: downloaded first',
      { hasMedia: true, media: { url, mimetype: 'image/jpeg', filename: null, error: null } },
      { url, mimetype: 'image/jpeg', filename: null, error: null },
      { url, mimetype: 'image/jpeg', filename: null },
    ],
    [
      'a document keeps its filename for later',
      { media: { url, mimetype: 'application/pdf', filename: 'a.pdf' } },
      { url, mimetype: 'application/pdf', filename: 'a.pdf' },
      { url, mimetype: 'application/pdf', filename: 'a.pdf' },
    ],
    [
      'an error: failed, and a job to record why',
      { hasMedia: true, media: { url: null, mimetype: 'image/jpeg', error: { message: 'x' } } },
      { status: 'failed', mimetype: 'image/jpeg' },
      { url: '', mimetype: 'image/jpeg', filename: null, engine_error: 'x' },
    ],
    [
      'a url of null: unavailable',
      { hasMedia: true, media: { url: null, mimetype: 'image/jpeg' } },
      { status: 'unavailable' },
      null,
    ],
    [
      'media null with hasMedia: unavailable',
      { hasMedia: true, media: null },
      { status: 'unavailable' },
      null,
    ],
    ['no media field with hasMedia: unavailable', { hasMedia: true }, { status: 'unavailable' }, null],
    [
      'sent by the session: outgoing, no download',
      { fromMe: true, hasMedia: true, media: { url, mimetype: 'image/jpeg' } },
      { status: 'outgoing', mimetype: 'image/jpeg' },
      null,
    ],
    [
      'sent, hasMedia without media: outgoing',
      { fromMe: true, hasMedia: true, media: null },
      { status: 'outgoing' },
      null,
    ],
    [
      'sent with an upload reference: outgoing',
      { fromMe: true, media: { media_id: 'med_01jd5q7h2k9x' } },
      { status: 'outgoing' },
      null,
    ],
    [
      'Herald’s own states pass',
      { media: { status: 'too_large', mimetype: 'video/mp4' } },
      { status: 'too_large', mimetype: 'video/mp4' },
      null,
    ],
    [
      'an upload reference is left to complete',
      { media: { media_id: 'med_01jd5q7h2k9x' } },
      { media_id: 'med_01jd5q7h2k9x' },
      null,
    ],
    ['no media', { hasMedia: false }, undefined, null],
  ];
  for (const [name, payload, media, download] of table) {
    test(name, () => {
      const out = normalise('message', msg(payload), null);
      assert.deepEqual(out.payload.media, media);
      assert.deepEqual(out.download, download);
    });
  }
  test('expires_at with an offset is delivered in UTC, its fraction kept', () => {
    const ready = { status: 'ready', mimetype: 'image/jpeg', media_id: 'med_x', url: 'https://m.example/x' };
    const out = normalise(
      'message',
      msg({ media: { ...ready, expires_at: '2026-11-21T12:30:00.25+02:00' } }),
      null,
    );
    assert.equal((out.payload.media as Obj).expires_at, '2026-11-21T10:30:00.25Z');
    const utc = { ...ready, expires_at: '2026-11-21T10:00:00Z' };
    const same = msg({ media: utc });
    assert.equal(normalise('message', same, null).payload.media, utc, 'a UTC time passes untouched');
  });
  test('toUtc', () => {
    assert.equal(toUtc('2026-11-21T00:30:00-01:00'), '2026-11-21T01:30:00Z');
    assert.equal(toUtc('2026-12-31T23:30:00-0100'), '2027-01-01T00:30:00Z');
    assert.equal(toUtc('2026-03-01T00:00:00+01:00'), '2026-02-28T23:00:00Z');
    for (const bad of [
      '2026-02-30T10:00:00Z',
      '2026-11-21T10:00:00',
      '2026-11-21 10:00:00Z',
      '2026-11-21T24:00:00Z',
    ]) {
      assert.equal(toUtc(bad), null, bad);
    }
  });
});

describe('session.status', () => {
  test('the phone comes from the engine’s own account when the payload has none', () => {
    assert.deepEqual(normalise('session.status', { status: 'WORKING' }, '15550001111').payload, {
      status: 'WORKING',
      phone: '15550001111',
    });
    const given = { status: 'WORKING', phone: '4917' };
    assert.equal(normalise('session.status', given, '15550001111').payload, given);
    const unknown = { status: 'PASSKEY_REQUIRED', data: { code: '1234' } };
    assert.equal(normalise('session.status', unknown, null).payload, unknown, 'kept as it is');
  });
});
