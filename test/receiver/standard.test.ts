/**
 * The receiver kit's Standard Webhooks half against the reference library (`standardwebhooks`): what one signs the
 * other verifies, and the secret's form is read as the library reads it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signStandard, standardKey, verifyStandard } from '../../packages/receiver/src/index.ts';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const OLD = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
const BODY = '{"event":"message","payload":{"body":"hé"}}';
const NOW = Date.UTC(2026, 10, 28, 12);
const SECONDS = String(NOW / 1000);

test('what the kit signs the library verifies, with either secret of a rotation, and the other way round', () => {
  const signature = signStandard([SECRET, OLD], 'evt_1', SECONDS, BODY);
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': SECONDS, 'webhook-signature': signature };
  // The library checks the timestamp against the real clock: its own sign gives the expected value for ours.
  const library = new Webhook(SECRET).sign('evt_1', new Date(NOW), BODY);
  assert.equal(signature.split(' ')[0], library);
  assert.equal(signature.split(' ')[1], new Webhook(OLD).sign('evt_1', new Date(NOW), BODY));
  for (const secret of [SECRET, OLD]) {
    assert.equal(verifyStandard({ secret, headers, rawBody: BODY, now: () => NOW }).ok, true, secret);
  }
  const bytes = Buffer.from(BODY);
  assert.equal(
    verifyStandard({ secret: SECRET, headers, rawBody: bytes, now: () => NOW }).ok,
    true,
    'raw bytes',
  );
});

test('verifyStandard refuses another body, id, secret, an old or future timestamp, and a missing header', () => {
  const signature = signStandard([SECRET], 'evt_1', SECONDS, BODY);
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': SECONDS, 'webhook-signature': signature };
  const reason = (over: Partial<Parameters<typeof verifyStandard>[0]>) => {
    const r = verifyStandard({ secret: SECRET, headers, rawBody: BODY, now: () => NOW, ...over });
    return r.ok ? 'ok' : r.reason;
  };
  assert.equal(reason({ rawBody: BODY.replace('hé', 'he') }), 'signature_mismatch');
  assert.equal(reason({ headers: { ...headers, 'webhook-id': 'evt_2' } }), 'signature_mismatch');
  assert.equal(reason({ secret: OLD }), 'signature_mismatch');
  assert.equal(reason({ now: () => NOW + 301_000 }), 'timestamp_too_old');
  assert.equal(reason({ now: () => NOW - 301_000 }), 'timestamp_too_new');
  assert.equal(reason({ now: () => NOW + 300_000 }), 'ok');
  assert.equal(
    reason({ headers: { 'webhook-id': 'evt_1', 'webhook-timestamp': SECONDS } }),
    'missing_header',
  );
  assert.equal(
    reason({ headers: { ...headers, 'webhook-signature': `v2,${signature.slice(3)}` } }),
    'signature_mismatch',
  );
});

test('a secret is whsec_ and the base64 of 24 to 64 bytes; other forms sign nothing and verify nothing', () => {
  for (const n of [24, 32, 64])
    assert.ok(standardKey(`whsec_${Buffer.alloc(n, 3).toString('base64')}`), `${n}`);
  for (const bad of [
    `whsec_${Buffer.alloc(23, 3).toString('base64')}`,
    `whsec_${Buffer.alloc(65, 3).toString('base64')}`,
    `whsec_${Buffer.alloc(33, 0xfb).toString('base64url')}`,
    `whsec_${Buffer.alloc(32, 3).toString('base64')}=`,
    Buffer.alloc(32, 3).toString('base64'),
    'whsec_',
  ]) {
    assert.equal(standardKey(bad), null, bad);
  }
  assert.equal(signStandard(['my-old-secret'], 'evt_1', SECONDS, BODY), '');
  assert.throws(() => verifyStandard({ secret: 'my-old-secret', headers: {}, rawBody: BODY }), TypeError);
});
