/**
 * Evolution's body read into Herald's events (domain/evolution-body.ts), as a source's consumer will call it too:
 * the ids that make Evolution's retries and double reports one event, the ordering mark of a session.status, the
 * inline file kept out of `_evolution`, and Evolution's JWT checked on a given clock (domain/engine-jwt.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkEngineJwt, isJwt } from '../../src/domain/engine-jwt.ts';
import { readEvolutionBody } from '../../src/domain/evolution-body.ts';
import { evolutionBody } from '../fixtures/evolution-events.ts';
import { evolutionJwt } from '../support/evolution-sender.ts';

type Obj = Record<string, any>;
const ANA = '5511988887777@s.whatsapp.net';
const read = (ins: string, body: unknown) => {
  const r = readEvolutionBody(ins, body);
  if ('errors' in r) assert.fail(JSON.stringify(r.errors));
  return r.read;
};
const upsert = (data: Obj) => evolutionBody('messages.upsert', { messageTimestamp: 1795341600, ...data });

test("a message's ids: the same at a retry and a later report, another at another instance, apart per kind", () => {
  const data = { key: { remoteJid: ANA, fromMe: false, id: 'ID1' }, message: { conversation: 'oi' } };
  const [m, any] = read('ins_a', upsert(data)).events;
  const [again] = read('ins_a', upsert(data)).events;
  const [elsewhere] = read('ins_b', upsert(data)).events;
  assert.deepEqual([m.event, any.event], ['message', 'message.any']);
  assert.equal(again.event_id, m.event_id, 'a new date_time, the same message');
  assert.notEqual(elsewhere.event_id, m.event_id);
  assert.notEqual(any.event_id, m.event_id);
  assert.equal(m.timestamp, 1795341600_000);
});

test('a revoke reported as a REVOKE edit and as messages.delete (bare key or stored message) is one id', () => {
  const key = { remoteJid: ANA, fromMe: true, id: 'GONE' };
  const ids = [
    evolutionBody('messages.edited', { key, type: 0 }),
    evolutionBody('messages.delete', key),
    evolutionBody('messages.delete', { id: 'cuid', key, message: { conversation: 'x' } }),
  ].map((b) => read('ins_a', b).events[0]);
  assert.deepEqual(
    ids.map((e) => e.event),
    ['message.revoked', 'message.revoked', 'message.revoked'],
  );
  assert.equal(new Set(ids.map((e) => e.event_id)).size, 1);
});

test('other kinds: one id per body (event, data, date_time); a session.status ordered by date_time', () => {
  const body = evolutionBody('connection.update', { state: 'open', wuid: ANA });
  const [status] = read('ins_a', body).events;
  assert.equal(read('ins_a', body).events[0].event_id, status.event_id);
  assert.notEqual(
    read('ins_a', { ...body, date_time: '2030-01-01T00:00:00.000Z' }).events[0].event_id,
    status.event_id,
  );
  assert.equal(status.status_at, Date.parse(body.date_time));
  assert.equal(status.timestamp, null, "Herald's time of receipt");
  assert.deepEqual(status.payload, { status: 'WORKING', phone: '5511988887777', _evolution: body.data });
});

test('an inline file is for Herald to store, once for both events, and left out of _evolution', () => {
  const data = {
    key: { remoteJid: ANA, fromMe: false, id: 'IMG' },
    message: { imageMessage: { mimetype: 'image/png', fileName: 'a.png' }, base64: 'iVBORw0K' },
  };
  const { events, inline } = read('ins_a', upsert(data));
  assert.deepEqual(inline, { base64: 'iVBORw0K', mimetype: 'image/png', filename: 'a.png' });
  assert.ok(events.every((e) => e.inline_media && !('base64' in (e.payload._evolution as Obj).message)));
  assert.equal(data.message.base64, 'iVBORw0K', 'the body is not changed in place');
});

test('names inherited by every object are no Evolution status, state or call: kept, never mapped', () => {
  for (const [event, data] of [
    ['messages.update', { keyId: 'X', fromMe: true, status: 'toString' }],
    ['connection.update', { state: 'constructor' }],
    ['call', { status: '__proto__' }],
  ] as const) {
    assert.equal(read('ins_a', evolutionBody(event, data)).events[0].event, event);
  }
});

test("Evolution's JWT: HS256 with the key, before exp, on the clock given", () => {
  const now = Date.parse('2026-11-20T09:00:00Z');
  const token = evolutionJwt('k', now);
  assert.ok(isJwt(token));
  assert.ok(!isJwt('hk_0123456789'));
  assert.equal(checkEngineJwt('k', token, now / 1000 + 599), null);
  assert.match(checkEngineJwt('k', token, now / 1000 + 600) ?? '', /expired/);
  assert.match(checkEngineJwt('other', token, now / 1000) ?? '', /not signed/);
});
