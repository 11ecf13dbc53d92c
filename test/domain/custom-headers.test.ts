/** A webhook's own headers: names, values and the ones Herald keeps for itself. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkHeaders } from '../../src/domain/custom-headers.ts';
import { sign, signWith } from '../../src/domain/signature.ts';

test('valid headers pass', () => {
  assert.deepEqual(checkHeaders({ 'X-Token': 'abc', Authorization: 'Bearer t', 'X-Tenant_Id.v2': '' }), []);
  assert.deepEqual(checkHeaders({}), []);
});

test('refused, each naming the header and the rule', () => {
  const table: [unknown, string, RegExp][] = [
    [['X-A'], 'headers', /must be an object/],
    [
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, 'v'])),
      'headers',
      /at most 20 headers, got 21/,
    ],
    [{ 'X A': 'v' }, 'headers.X A', /not a valid header name/],
    [{ 'Content-Type': 'text/plain' }, 'headers.Content-Type', /set by Herald itself/],
    [{ host: 'evil.example' }, 'headers.host', /set by Herald itself/],
    [{ 'User-Agent': 'x' }, 'headers.User-Agent', /set by Herald/],
    [{ 'Transfer-Encoding': 'chunked' }, 'headers.Transfer-Encoding', /set by Herald/],
    [{ 'x-service-signature': 'v1=x' }, 'headers.x-service-signature', /set by Herald/],
    [{ 'X-Service-Anything': 'x' }, 'headers.X-Service-Anything', /set by Herald/],
    [{ 'X-Token': 'a', 'x-token': 'b' }, 'headers.x-token', /given twice/],
    [{ 'X-Token': 7 }, 'headers.X-Token', /must be a string/],
    [{ 'X-Token': 'a'.repeat(1025) }, 'headers.X-Token', /at most 1024 characters/],
    [{ 'X-Token': 'a\r\nX-Evil: 1' }, 'headers.X-Token', /line break \(CR, LF\) or NUL/],
    [{ 'X-Token': 'a\u0000' }, 'headers.X-Token', /NUL/],
  ];
  for (const [headers, field, rule] of table) {
    const [first] = checkHeaders(headers);
    assert.equal(first?.field, field, JSON.stringify(headers).slice(0, 60));
    assert.match(first.message, rule);
  }
});

test('two signatures while a rotated secret is honoured: new first, a space between, each a v1 HMAC', () => {
  // Computed by hand: printf '%s' '1763719200.{"a":1}' | openssl dgst -sha256 -hmac whsec_new (and whsec_old)
  const body = '{"a":1}';
  const both = signWith(['whsec_new', 'whsec_old'], 1763719200, body);
  assert.equal(
    both,
    'v1=d14198bb76140b36215b6fb4945c4a91b4bead9f65a44d2f7a6042424618578f ' +
      'v1=1be56304a157c2b303218f5ed40486824340aad1d6b10329a91b7999485b8419',
  );
  assert.equal(signWith(['whsec_new'], 1763719200, body), sign('whsec_new', 1763719200, body));
});
