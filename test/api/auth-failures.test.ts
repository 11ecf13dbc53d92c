/**
 * Failed authentications are limited per client address: beyond AUTH_FAILURES_PER_MIN within a minute, that address
 * is answered 429 with Retry-After for the rest of the minute whatever key it carries; every failure is logged at
 * warn with the address and the kind of credential, never the credential. Behind TRUST_PROXY the address is the
 * forwarded one; without it, X-Forwarded-For is ignored. On a clock the test moves.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';

let now = 1_800_000_000_000;
const clock = () => now;

/** A pino logger whose JSON lines the test reads. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'warn' }, sink), lines, text: () => text };
}

describe('behind a trusted proxy', () => {
  let h: TestHerald;
  const log = capture();
  let link: string;
  before(async () => {
    h = await startTestHerald(
      { AUTH_FAILURES_PER_MIN: '4', TRUST_PROXY: '127.0.0.1', LOG_LEVEL: 'warn' },
      { clock, logger: log.logger },
    );
    const ins = await h.createInstance('guarded');
    const made = await h.request('POST', `/instances/${ins}/portal-links`, { body: {} });
    link = new URL(made.body.url).hash.slice(1);
  });
  after(() => h.close());

  const from = (address: string, key: string | null, path = '/instances') =>
    h.request('GET', path, { key, headers: { 'x-forwarded-for': address } });

  test('four failures a minute, then 429 for the rest of it whatever the key; other addresses and health untouched', async () => {
    const guesses = [
      null,
      'hk_guessed0123456789abcdefghijklmn',
      'hpl_guessed0123456789abcdefghijklm',
      'admin-guess-42',
    ];
    for (const key of guesses) assert.equal((await from('203.0.113.9', key)).status, 401, String(key));

    now += 15_000;
    const refused = await from('203.0.113.9', ADMIN_KEY);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '45');
    assert.deepEqual(refused.body.error, {
      code: 'rate_limited',
      message:
        'too many failed authentications from this address (more than 4 a minute, AUTH_FAILURES_PER_MIN); ' +
        'retry in 45 seconds',
      details: [],
    });
    assert.equal((await from('203.0.113.9', link)).status, 429, 'a valid link too');
    assert.equal((await from('203.0.113.10', ADMIN_KEY)).status, 200, 'another address');
    assert.equal((await from('203.0.113.9', null, '/healthz')).status, 200, 'health checks need no key');

    now += 30_000;
    assert.equal((await from('203.0.113.9', ADMIN_KEY)).headers.get('retry-after'), '15');
    now += 15_000;
    assert.equal((await from('203.0.113.9', ADMIN_KEY)).status, 200, 'a new minute');
    // Counted afresh: four more failures before the next refusal.
    for (let i = 0; i < 4; i++) assert.equal((await from('203.0.113.9', 'admin-guess-43')).status, 401);
    assert.equal((await from('203.0.113.9', ADMIN_KEY)).status, 429);
  });

  test('each failure is a warn line with the address and the credential’s kind, and no credential', () => {
    const failures = log.lines.filter((l) => String(l.msg).startsWith('authentication failed'));
    assert.deepEqual(
      failures.slice(0, 4).map((l) => [l.level, l.client_address, l.credential]),
      [
        [40, '203.0.113.9', 'missing'],
        [40, '203.0.113.9', 'instance_key'],
        [40, '203.0.113.9', 'portal_link'],
        [40, '203.0.113.9', 'admin'],
      ],
    );
    assert.deepEqual(
      failures.slice(0, 4).map((l) => l.msg),
      [
        'authentication failed: an Authorization: Bearer <key> header is required',
        'authentication failed: unknown or revoked API key',
        'authentication failed: unknown or revoked portal link',
        'authentication failed: unknown or revoked API key',
      ],
    );
    assert.equal(failures.length, 8);
    const limited = log.lines.filter((l) => String(l.msg).startsWith('authentication failures:'));
    assert.deepEqual(
      limited.map((l) => l.client_address),
      ['203.0.113.9', '203.0.113.9'],
      'said once each time the limit is reached',
    );
    for (const secret of [
      'hk_guessed0123456789abcdefghijklmn',
      'hpl_guessed0123456789abcdefghijklm',
      'admin-guess-42',
      'admin-guess-43',
      'guessed0123456789',
      ADMIN_KEY,
      link,
    ]) {
      assert.equal(log.text().includes(secret), false, `the log holds ${secret.slice(0, 12)}…`);
    }
  });
});

describe('without TRUST_PROXY', () => {
  let h: TestHerald;
  before(async () => {
    h = await startTestHerald({ AUTH_FAILURES_PER_MIN: '2' }, { clock });
  });
  after(() => h.close());

  test('X-Forwarded-For is not believed: the connection’s address is the one limited', async () => {
    for (const forwarded of ['198.51.100.1', '198.51.100.2']) {
      const r = await h.request('GET', '/instances', {
        key: 'wrong',
        headers: { 'x-forwarded-for': forwarded },
      });
      assert.equal(r.status, 401);
    }
    const r = await h.request('GET', '/instances', { headers: { 'x-forwarded-for': '198.51.100.3' } });
    assert.equal(r.status, 429, 'a third forwarded address is still the same client');
    now += 60_000;
    assert.equal((await h.request('GET', '/instances')).status, 200);
  });
});
