/**
 * Evolution's own credential: with `headers: { jwt_key: <the instance's engine HMAC key> }` in its webhook, Evolution
 * sends `Authorization: Bearer <JWT>` (HS256, valid 10 minutes). Herald takes it at that instance's Evolution
 * endpoint only when it verifies with the key and has not expired, on Herald's clock (a test's own here); else 401.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { evolutionBody } from '../fixtures/evolution-events.ts';
import { EvolutionSender, evolutionJwt, postEvolution } from '../support/evolution-sender.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

const KEY = 'evolution-jwt-key-5d1c';
let now = Date.now();
let h: TestHerald;
let receiver: TestReceiver;
let ins: string;

before(async () => {
  h = await startTestHerald({}, { clock: () => now });
  receiver = await TestReceiver.start();
  ins = await h.createInstance('evolution');
  await h.request('PATCH', `/instances/${ins}`, { body: { engine_hmac_key: KEY } });
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'] });
});
after(async () => {
  await receiver.close();
  await h.close();
});

let n = 0;
const body = () =>
  evolutionBody('messages.update', {
    keyId: `3EB0JWT${String(++n).padStart(10, '0')}`,
    remoteJid: '5511988887777@s.whatsapp.net',
    fromMe: true,
    status: 'READ',
  });

const withToken = (token: string) => ({ key: token });
const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** A token as another signer would make it: its own header and claims, signed with `key` (HS256's HMAC). */
function token(header: object, claims: object, key = KEY, hash = 'sha256'): string {
  const head = `${part(header)}.${part(claims)}`;
  return `${head}.${createHmac(hash, key).update(head).digest('base64url')}`;
}
const message = async (res: { body: any }) => res.body.error.message as string;

test("a token Evolution minted with the instance's key is accepted, as Evolution's sender sends it", async () => {
  const res = await postEvolution(h.url, ins, body(), withToken(evolutionJwt(KEY, now)));
  assert.equal(res.status, 202, JSON.stringify(res.body));
  const sender = new EvolutionSender({
    url: `${h.url}/instances/${ins}/engine/evolution`,
    byEvents: true,
    headers: { jwt_key: KEY },
    now: () => now,
  });
  const sent = await sender.send(body());
  assert.deepEqual(sent?.answers, [202]);
});

test('the same token once its exp has passed (Evolution gives it 600 s) is a 401', async () => {
  const minted = evolutionJwt(KEY, now);
  assert.equal((await postEvolution(h.url, ins, body(), withToken(minted))).status, 202);
  now += 601_000;
  try {
    const late = await postEvolution(h.url, ins, body(), withToken(minted));
    assert.equal(late.status, 401);
    assert.match(await message(late), /expired/);
  } finally {
    now -= 601_000;
  }
});

test('a token not signed with this key, not HS256, or without exp is a 401; nothing is stored', async () => {
  const exp = Math.floor(now / 1000) + 600;
  const before = (await h.request('GET', `/instances/${ins}/deliveries?limit=100`)).body.deliveries.length;
  const refused: [string, string, RegExp][] = [
    ['another key', evolutionJwt('another-key', now), /not signed with this instance/],
    ['HS512', token({ alg: 'HS512', typ: 'JWT' }, { exp }, KEY, 'sha512'), /HS256/],
    ['alg none', `${part({ alg: 'none' })}.${part({ exp })}.`, /./],
    ['no exp', token({ alg: 'HS256', typ: 'JWT' }, { app: 'evolution' }), /exp/],
    ['a broken signature', `${evolutionJwt(KEY, now).slice(0, -4)}AAAA`, /not signed/],
  ];
  for (const [what, jwt] of refused) {
    const res = await postEvolution(h.url, ins, body(), withToken(jwt));
    assert.equal(res.status, 401, what);
    assert.equal(res.body.error.code, 'unauthorized', what);
  }
  for (const [what, jwt, why] of refused.filter(([w]) => w !== 'alg none')) {
    assert.match(await message(await postEvolution(h.url, ins, body(), withToken(jwt))), why, what);
  }
  const after = (await h.request('GET', `/instances/${ins}/deliveries?limit=100`)).body.deliveries.length;
  assert.equal(after, before);
});

test("a token is this instance's alone, and only where the instance has an engine HMAC key", async () => {
  const other = await h.createInstance('other');
  await h.request('PATCH', `/instances/${other}`, { body: { engine_hmac_key: 'the-other-key' } });
  const plain = await h.createInstance('no key');
  const minted = evolutionJwt(KEY, now);
  assert.equal((await postEvolution(h.url, other, body(), withToken(minted))).status, 401);
  const noKey = await postEvolution(h.url, plain, body(), withToken(minted));
  assert.equal(noKey.status, 401);
  assert.match(await message(noKey), /engine HMAC key/);
  // Herald's other routes never take it.
  const elsewhere = await h.request('POST', `/instances/${ins}/events`, {
    key: minted,
    body: { event: 'session.status', payload: { status: 'WORKING' } },
  });
  assert.equal(elsewhere.status, 401);
});

test('the instance key still works beside the engine HMAC key', async () => {
  const key = (await h.request('POST', `/instances/${ins}/keys`, { body: { scope: 'publish' } })).body.key;
  assert.equal((await postEvolution(h.url, ins, body(), { key })).status, 202);
});
