import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';

test('a sealed secret opens with its key and reveals nothing without it', () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('whsec_live_secret');
  assert.ok(!sealed.includes('whsec_live_secret'));
  assert.notEqual(box.seal('whsec_live_secret'), sealed, 'a fresh IV each time');
  assert.equal(box.open(sealed), 'whsec_live_secret');
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed));
});

test('a tampered sealed secret does not open', () => {
  const box = new SecretBox(randomBytes(32));
  const [v, iv, tag, data] = box.seal('abc').split('.');
  const flipped = Buffer.from(data, 'base64url');
  flipped[0] ^= 1;
  assert.throws(() => box.open([v, iv, tag, flipped.toString('base64url')].join('.')));
});

test('ids carry their prefix, are URL-safe, unique, and sort by creation time', () => {
  const ids = Array.from({ length: 1000 }, () => newId('evt'));
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^evt_[0-9a-z]{26}$/);
  assert.ok(newId('dlv', 1_000) < newId('dlv', 2_000));
});
