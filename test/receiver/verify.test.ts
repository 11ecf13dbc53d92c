import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type VerifyResult, verify } from '../../packages/receiver/src/verify.ts';
import { sign } from '../../src/domain/signature.ts';

const SECRET = 'whsec_test';
const TS = 1700000000;
const BODY = '{"event_id":"evt_test"}';
// Computed outside the code under test:
//   printf '%s' '1700000000.{"event_id":"evt_test"}' | openssl dgst -sha256 -hmac 'whsec_test'
const VECTOR = 'v1=e818329f5aa4c8ccf50d0100f7619add2cf301f875772ebfe88b8d21f438413d';

const atTs =
  (offsetSeconds = 0) =>
  () =>
    (TS + offsetSeconds) * 1000;

function headers(overrides: Record<string, string | string[] | undefined> = {}) {
  return {
    'x-service-event-id': 'evt_test',
    'x-service-timestamp': String(TS),
    'x-service-signature': VECTOR,
    ...overrides,
  };
}

function reason(result: VerifyResult): string {
  return result.ok ? 'ok' : result.reason;
}

describe('sign', () => {
  it('matches the independently computed HMAC vector', () => {
    assert.equal(sign(SECRET, TS, BODY), VECTOR);
    assert.equal(sign(SECRET, String(TS), BODY), VECTOR);
  });

  it('signs a Buffer body identically to the same string', () => {
    assert.equal(sign(SECRET, TS, Buffer.from(BODY, 'utf8')), VECTOR);
    assert.equal(sign(SECRET, TS, new TextEncoder().encode(BODY)), VECTOR);
  });

  it('refuses an empty secret', () => {
    assert.throws(() => sign('', TS, BODY), TypeError);
  });
});

describe('verify', () => {
  it('accepts a valid signature', () => {
    const result = verify({ secret: SECRET, headers: headers(), rawBody: BODY, now: atTs() });
    assert.deepEqual(result, { ok: true, eventId: 'evt_test', timestamp: TS });
  });

  it('rejects a tampered body', () => {
    const result = verify({
      secret: SECRET,
      headers: headers(),
      rawBody: '{"event_id":"evt_tesT"}',
      now: atTs(),
    });
    assert.equal(reason(result), 'signature_mismatch');
  });

  it('rejects a tampered timestamp', () => {
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-timestamp': String(TS + 1) }),
      rawBody: BODY,
      now: atTs(),
    });
    assert.equal(reason(result), 'signature_mismatch');
  });

  it('rejects the wrong secret', () => {
    const result = verify({ secret: 'whsec_other', headers: headers(), rawBody: BODY, now: atTs() });
    assert.equal(reason(result), 'signature_mismatch');
  });

  for (const name of ['x-service-event-id', 'x-service-timestamp', 'x-service-signature']) {
    it(`reports a missing ${name}`, () => {
      const result = verify({
        secret: SECRET,
        headers: headers({ [name]: undefined }),
        rawBody: BODY,
        now: atTs(),
      });
      assert.equal(reason(result), 'missing_header');
    });
  }

  it('treats an empty header as missing', () => {
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-signature': '' }),
      rawBody: BODY,
      now: atTs(),
    });
    assert.equal(reason(result), 'missing_header');
  });

  it('reports a signature without the v1= prefix as malformed', () => {
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-signature': VECTOR.slice(3) }),
      rawBody: BODY,
      now: atTs(),
    });
    assert.equal(reason(result), 'malformed_signature');
  });

  it('reports non-hex and wrong-length signatures as malformed', () => {
    for (const bad of [`v1=${'z'.repeat(64)}`, 'v1=abc', `${VECTOR}00`, 'v1=']) {
      const result = verify({
        secret: SECRET,
        headers: headers({ 'x-service-signature': bad }),
        rawBody: BODY,
        now: atTs(),
      });
      assert.equal(reason(result), 'malformed_signature', bad);
    }
  });

  it('reports a non-integer timestamp as malformed', () => {
    for (const bad of ['abc', '1.7e9', '-1700000000', '1700000000.5', '0x10']) {
      const result = verify({
        secret: SECRET,
        headers: headers({ 'x-service-timestamp': bad }),
        rawBody: BODY,
        now: atTs(),
      });
      assert.equal(reason(result), 'malformed_timestamp', bad);
    }
  });

  it('accepts a timestamp exactly 300 s old or ahead', () => {
    for (const offset of [300, -300]) {
      const result = verify({ secret: SECRET, headers: headers(), rawBody: BODY, now: atTs(offset) });
      assert.equal(reason(result), 'ok', String(offset));
    }
  });

  it('rejects a timestamp 301 s old', () => {
    const result = verify({ secret: SECRET, headers: headers(), rawBody: BODY, now: atTs(301) });
    assert.equal(reason(result), 'timestamp_too_old');
  });

  it('rejects a timestamp 301 s ahead', () => {
    const result = verify({ secret: SECRET, headers: headers(), rawBody: BODY, now: atTs(-301) });
    assert.equal(reason(result), 'timestamp_too_new');
  });

  it('honours a custom tolerance', () => {
    const result = verify({
      secret: SECRET,
      headers: headers(),
      rawBody: BODY,
      now: atTs(11),
      toleranceSeconds: 10,
    });
    assert.equal(reason(result), 'timestamp_too_old');
  });

  it('verifies a Buffer body the same as a string body', () => {
    const ok = verify({ secret: SECRET, headers: headers(), rawBody: Buffer.from(BODY), now: atTs() });
    assert.equal(reason(ok), 'ok');
    const tampered = verify({
      secret: SECRET,
      headers: headers(),
      rawBody: Buffer.from(`${BODY}\n`),
      now: atTs(),
    });
    assert.equal(reason(tampered), 'signature_mismatch');
  });

  it('verifies non-ASCII bodies byte-exactly', () => {
    const body = '{"text":"héllo ✓"}';
    const sig = sign(SECRET, TS, Buffer.from(body, 'utf8'));
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-signature': sig }),
      rawBody: Buffer.from(body, 'utf8'),
      now: atTs(),
    });
    assert.equal(reason(result), 'ok');
  });

  it('accepts any of several signatures (secret rotation)', () => {
    const old = sign('whsec_old', TS, BODY);
    for (const value of [`${old} ${VECTOR}`, `${VECTOR} ${old}`, `v2=${'a'.repeat(64)} ${VECTOR}`]) {
      const result = verify({
        secret: SECRET,
        headers: headers({ 'x-service-signature': value }),
        rawBody: BODY,
        now: atTs(),
      });
      assert.equal(reason(result), 'ok', value);
    }
    const none = verify({
      secret: SECRET,
      headers: headers({ 'x-service-signature': `${old} ${sign('whsec_x', TS, BODY)}` }),
      rawBody: BODY,
      now: atTs(),
    });
    assert.equal(reason(none), 'signature_mismatch');
  });

  it('accepts a repeated signature header given as an array', () => {
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-signature': [sign('whsec_old', TS, BODY), VECTOR] }),
      rawBody: BODY,
      now: atTs(),
    });
    assert.equal(reason(result), 'ok');
  });

  it('matches header names case-insensitively in a plain record', () => {
    const result = verify({
      secret: SECRET,
      headers: {
        'X-Service-Event-Id': 'evt_test',
        'X-SERVICE-TIMESTAMP': String(TS),
        'x-Service-Signature': VECTOR,
      },
      rawBody: BODY,
      now: atTs(),
    });
    assert.deepEqual(result, { ok: true, eventId: 'evt_test', timestamp: TS });
  });

  it('accepts a fetch Headers object', () => {
    const h = new Headers({ 'X-Service-Event-Id': 'evt_test', 'X-Service-Timestamp': String(TS) });
    h.append('X-Service-Signature', sign('whsec_old', TS, BODY));
    h.append('X-Service-Signature', VECTOR);
    const result = verify({ secret: SECRET, headers: h, rawBody: BODY, now: atTs() });
    assert.deepEqual(result, { ok: true, eventId: 'evt_test', timestamp: TS });
    h.delete('X-Service-Signature');
    assert.equal(
      reason(verify({ secret: SECRET, headers: h, rawBody: BODY, now: atTs() })),
      'missing_header',
    );
  });

  it('uses Date.now by default', () => {
    const ts = Math.floor(Date.now() / 1000);
    const result = verify({
      secret: SECRET,
      headers: headers({ 'x-service-timestamp': String(ts), 'x-service-signature': sign(SECRET, ts, BODY) }),
      rawBody: BODY,
    });
    assert.equal(reason(result), 'ok');
  });

  it('throws on an empty secret', () => {
    assert.throws(() => verify({ secret: '', headers: headers(), rawBody: BODY, now: atTs() }), TypeError);
  });
});
