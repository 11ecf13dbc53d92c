/** Which engine events report the same thing twice (src/domain/engine-dedupe.ts), over every WAHA fixture. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dedupeKey } from '../../src/domain/engine-dedupe.ts';
import { completed, WAHA_EVENTS } from '../fixtures/waha-events.ts';

const fixtures = WAHA_EVENTS.map((f) => ({ name: f.name, ...completed(f) })) as {
  name: string;
  event: string;
  payload: Record<string, any>;
}[];

test('every message-kind fixture has a key, and the same body again has the same key', () => {
  for (const f of fixtures) {
    const key = dedupeKey(f.event, f.payload);
    if (f.event.startsWith('message')) assert.ok(key, `${f.name}: a key`);
    assert.equal(dedupeKey(f.event, structuredClone(f.payload)), key, f.name);
  }
});

test('no two fixtures share a key: each reports something else, even where documentation reuses a placeholder id', () => {
  const keys = new Map<string, string>();
  for (const f of fixtures) {
    const key = dedupeKey(f.event, f.payload);
    if (key === null) continue;
    assert.equal(keys.get(key), undefined, `${f.name} and ${keys.get(key)} share ${key}`);
    keys.set(key, f.name);
  }
});

test('statuses, presences and group changes are never repeats', () => {
  for (const f of fixtures.filter((f) => !f.event.startsWith('message'))) {
    assert.equal(dedupeKey(f.event, f.payload), null, f.name);
  }
});

test('a message and its message.any are two events; the kind is part of the key', () => {
  const payload = { id: 'false_14155550123@c.us_3EB0A1', fromMe: false, body: 'hi', timestamp: 1741249702 };
  assert.notEqual(dedupeKey('message', payload), dedupeKey('message.any', payload));
});

test('acks: each step is news, the same step again is a repeat', () => {
  const ack = (n: number) => ({ id: 'true_14155550123@c.us_3EB0D9', ack: n, ackName: 'x' });
  assert.equal(dedupeKey('message.ack', ack(2)), dedupeKey('message.ack', ack(2)));
  assert.notEqual(dedupeKey('message.ack', ack(2)), dedupeKey('message.ack', ack(3)));
  assert.equal(dedupeKey('message.ack', { id: 'x' }), null, 'no ack value: nothing to compare');
});

test('reactions: the same emoji from the same sender on the same message is a repeat; another, or its removal, is not', () => {
  const reaction = (text: string, from = '14155550123@c.us') => ({
    id: `false_${from}_R${text.length}`,
    from,
    reaction: { text, messageId: 'true_14155550123@c.us_3EB0D9' },
  });
  assert.equal(dedupeKey('message.reaction', reaction('👍')), dedupeKey('message.reaction', reaction('👍')));
  assert.notEqual(dedupeKey('message.reaction', reaction('👍')), dedupeKey('message.reaction', reaction('')));
  assert.notEqual(
    dedupeKey('message.reaction', reaction('👍')),
    dedupeKey('message.reaction', reaction('👍', '14155550999@c.us')),
  );
});

test('revokes: the message revoked, in either of WAHA’s shapes', () => {
  const flat = { from: 'a@c.us', to: 'b@c.us', revokedMessageId: '3EB0A1' };
  const waha = { after: { id: 'false_a@c.us_3EB0FF' }, before: null, revokedMessageId: '3EB0A1' };
  assert.equal(dedupeKey('message.revoked', flat), dedupeKey('message.revoked', waha));
  assert.equal(dedupeKey('message.revoked', { after: null, before: null }), null);
});
