import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createReferenceReceiver } from '../../packages/receiver/src/reference-server.ts';
import { signedPost } from '../support/signed-post.ts';

const SECRET = 'whsec_reference';
const lines: string[] = [];
const server = createReferenceReceiver({ secret: SECRET, log: (l) => lines.push(l) });
let url = ''; // the server deliver() posts to

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function deliver(
  eventId: string,
  opts: { ageSeconds?: number; tamper?: boolean; secrets?: string[] } = {},
) {
  const body = JSON.stringify({
    event_id: eventId,
    event: 'message',
    instance_id: 'ins_x',
    timestamp: 1,
    payload: {},
  });
  const res = await signedPost(url, {
    secret: opts.secrets ?? SECRET,
    eventId,
    body: opts.tamper ? body.replace('message', 'massage') : body,
    signed: body,
    ageSeconds: opts.ageSeconds,
  });
  return { status: res.status, body: await res.json() };
}

test('a correctly signed delivery is accepted and printed', async () => {
  assert.deepEqual(await deliver('evt_ref1'), { status: 200, body: { received: true, duplicate: false } });
  assert.match(lines.at(-1) ?? '', /200 {2}message +evt_ref1 {2}verified$/);
});

test('a tampered body is a 401 (seed §5.1)', async () => {
  const r = await deliver('evt_ref2', { tamper: true });
  assert.equal(r.status, 401);
  assert.equal(r.body.error, 'signature_mismatch');
});

test('during a secret rotation it accepts the delivery by either signature, and refuses one signed by neither', async () => {
  const rotatedAway = await deliver('evt_rot1', { secrets: ['whsec_new', SECRET] });
  assert.equal(rotatedAway.status, 200, 'the receiver still holding the old secret');
  const rotatedTo = await deliver('evt_rot2', { secrets: [SECRET, 'whsec_old'] });
  assert.equal(rotatedTo.status, 200, 'the receiver already holding the new secret');
  assert.equal((await deliver('evt_rot3', { secrets: ['whsec_a', 'whsec_b'] })).status, 401);
});

test('a timestamp 301 s old is a 401, 299 s old is accepted', async () => {
  assert.equal((await deliver('evt_ref3', { ageSeconds: 301 })).status, 401);
  assert.equal((await deliver('evt_ref4', { ageSeconds: 299 })).status, 200);
});

test('an event_id already processed is acknowledged and ignored', async () => {
  await deliver('evt_ref5');
  assert.deepEqual(await deliver('evt_ref5'), { status: 200, body: { received: true, duplicate: true } });
  assert.match(lines.at(-1) ?? '', /duplicate, ignored/);
});

test('misbehaving on purpose: a drawn failure answers failStatus and is not recorded, so the retry is processed', async () => {
  const draws = [0.1, 0.9]; // below failRate: fail; above: process
  const flaky = createReferenceReceiver({
    secret: SECRET,
    failRate: 0.5,
    failStatus: 429,
    random: () => draws.shift() ?? 1,
    log: (l) => lines.push(l),
  });
  await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
  const saved = url;
  url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`;
  try {
    assert.equal((await deliver('evt_flaky')).status, 429);
    assert.match(lines.at(-1) ?? '', / 429 {2}message +evt_flaky {2}verified {2}\(failed on purpose\)$/);
    assert.deepEqual(await deliver('evt_flaky'), { status: 200, body: { received: true, duplicate: false } });
  } finally {
    url = saved;
    await new Promise<void>((resolve) => flaky.close(() => resolve()));
  }
});

test('a delay holds every verified answer back by that long', async () => {
  const slow = createReferenceReceiver({ secret: SECRET, delayMs: 400, log: () => {} });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const saved = url;
  url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
  try {
    const started = performance.now();
    assert.equal((await deliver('evt_slow')).status, 200);
    assert.ok(performance.now() - started >= 390, 'answered after the delay');
  } finally {
    url = saved;
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  }
});
