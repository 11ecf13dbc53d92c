/**
 * A webhook's own headers: names, values, the ones Herald keeps for itself and the ones undici would refuse to send
 * (tried against a real receiver on 127.0.0.1), and their values masked in views.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { checkHeaders, maskHeaders, unmaskHeaders } from '../../src/domain/custom-headers.ts';
import { sign, signWith } from '../../src/domain/signature.ts';

test('valid headers pass', () => {
  assert.deepEqual(checkHeaders({ 'X-Token': 'abc', Authorization: 'Bearer t', 'X-Tenant_Id.v2': '' }), []);
  assert.deepEqual(
    checkHeaders({ 'X-Name': 'café ÿ', 'X-Proxied-By': 'edge' }),
    [],
    'Latin-1; Proxy- only as a prefix',
  );
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
    [{ 'X-Token': 'a\r\nX-Evil: 1' }, 'headers.X-Token', /control character \(CR, LF, NUL, tab…\)/],
    [{ 'X-Token': 'a\u0000' }, 'headers.X-Token', /control character/],
    [{ 'X-Token': 'a\tb' }, 'headers.X-Token', /control character/],
    [{ 'X-Token': '\u001b[31m' }, 'headers.X-Token', /control character/],
    [{ 'X-Token': 'a\u007f' }, 'headers.X-Token', /control character/],
    [{ 'X-Token': 'a\u009f' }, 'headers.X-Token', /control character/],
    [{ 'X-Token': 'ok\u2028' }, 'headers.X-Token', /up to U\+00FF only \(Latin-1\)/],
    [{ 'X-Token': '😀' }, 'headers.X-Token', /up to U\+00FF/],
    [{ Expect: '100-continue' }, 'headers.Expect', /connection or a proxy/],
    [{ upgrade: 'h2c' }, 'headers.upgrade', /connection or a proxy/],
    [{ 'KEEP-ALIVE': '5' }, 'headers.KEEP-ALIVE', /connection or a proxy/],
    [{ te: 'trailers' }, 'headers.te', /connection or a proxy/],
    [{ Trailer: 'X-A' }, 'headers.Trailer', /connection or a proxy/],
    [{ 'Proxy-Authorization': 'Basic eA==' }, 'headers.Proxy-Authorization', /connection or a proxy/],
    [{ 'Proxy-Connection': 'keep-alive' }, 'headers.Proxy-Connection', /connection or a proxy/],
  ];
  for (const [headers, field, rule] of table) {
    const [first] = checkHeaders(headers);
    assert.equal(first?.field, field, JSON.stringify(headers).slice(0, 60));
    assert.match(first.message, rule);
  }
});

test('views show every name with ****; **** given back is the saved value of that name, in any case', () => {
  assert.deepEqual(maskHeaders({ Authorization: 'Bearer t', 'X-A': '' }), {
    Authorization: '****',
    'X-A': '****',
  });
  assert.equal(maskHeaders(null), null);
  const saved = { Authorization: 'Bearer t', 'X-A': 'a' };
  assert.deepEqual(unmaskHeaders({ authorization: '****', 'X-A': 'new', 'X-B': 'b' }, saved), {
    headers: { authorization: 'Bearer t', 'X-A': 'new', 'X-B': 'b' },
    errors: [],
  });
  const { errors } = unmaskHeaders({ 'X-C': '****' }, saved);
  assert.equal(errors[0].field, 'headers.X-C');
  assert.match(errors[0].message, /no saved X-C header: give its value/);
  assert.equal(unmaskHeaders({ 'X-A': '****' }, null).errors.length, 1, 'nothing saved yet');
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

test('every header undici refuses to send is refused at save (names, and each character up to U+0400)', async (t) => {
  const server = createServer((_req, res) => res.end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const agent = new Agent();
  t.after(() => agent.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const undiciSends = async (name: string, value: string) => {
    try {
      const res = await request(url, {
        method: 'POST',
        headers: { [name]: value },
        body: '{}',
        dispatcher: agent,
      });
      await res.body.dump();
      return true;
    } catch {
      return false;
    }
  };
  const names = [
    'Expect',
    'Upgrade',
    'Keep-Alive',
    'Transfer-Encoding',
    'Connection',
    'Host',
    'TE',
    'X-Token',
  ];
  const candidates: [string, string][] = [
    ...names.map((n): [string, string] => [n, 'x y']),
    ...Array.from({ length: 0x400 }, (_, code): [string, string] => [
      'X-Token',
      `a${String.fromCharCode(code)}b`,
    ]),
  ];
  const missed: string[] = [];
  for (const [name, value] of candidates) {
    if (!(await undiciSends(name, value)) && checkHeaders({ [name]: value }).length === 0)
      missed.push(`${name}: ${JSON.stringify(value)}`);
  }
  assert.deepEqual(missed, [], 'undici refuses these, so they must be refused at save');
});
