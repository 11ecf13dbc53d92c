import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { route } from '../../src/domain/routing.ts';
import type { Webhook } from '../../src/domain/types.ts';

const hook = (webhook_id: string, events: string[], over: Partial<Webhook> = {}): Webhook => ({
  webhook_id,
  instance_id: 'ins_01JD5Q7H2K9X4M8N3P6R0T1V2W',
  destination_url: `https://example.com/${webhook_id}`,
  events,
  ignore_status: true,
  enabled: true,
  secret_sealed: null,
  disabled_reason: null,
  disabled_at: null,
  created_at: 0,
  updated_at: 0,
  ...over,
});

const HOOKS: Webhook[] = [
  hook('whk_msg', ['message']),
  hook('whk_any', ['message.any']),
  hook('whk_ack', ['message.ack', 'session.status']),
  hook('whk_all', ['*']),
  hook('whk_off', ['*', 'message'], { enabled: false }),
  hook('whk_msg_status', ['message'], { ignore_status: false }),
  hook('whk_any_status', ['message.any'], { ignore_status: false }),
  hook('whk_off_status', ['message'], { ignore_status: false, enabled: false }),
];

const chat = { from: '15557654321@c.us', to: '15550001111@c.us' };
const story = (field: string) => ({ ...chat, [field]: 'status@broadcast' });

describe('route', () => {
  // [case, event kind, payload, expected webhook ids in input order]
  const table: [string, string, Record<string, unknown>, string[]][] = [
    ['message goes to message subscribers and *', 'message', chat, ['whk_msg', 'whk_all', 'whk_msg_status']],
    ['message.any is distinct from message', 'message.any', chat, ['whk_any', 'whk_all', 'whk_any_status']],
    ['kind in a list of several', 'message.ack', chat, ['whk_ack', 'whk_all']],
    ['session.status', 'session.status', { status: 'WORKING' }, ['whk_ack', 'whk_all']],
    ['only * takes a kind nobody names', 'presence.update', { id: chat.from }, ['whk_all']],
    ['status@broadcast in from', 'message', story('from'), ['whk_msg_status']],
    ['status@broadcast in to', 'message.any', story('to'), ['whk_any_status']],
    ['status@broadcast in chat_id', 'message', { ...chat, chat_id: 'status@broadcast' }, ['whk_msg_status']],
    ['status events skip * with ignore_status', 'message.ack', story('to'), []],
  ];
  for (const [name, event, payload, expected] of table) {
    test(name, () => {
      assert.deepEqual(
        route({ event, payload }, HOOKS).map((w) => w.webhook_id),
        expected,
      );
    });
  }

  test('a disabled webhook gets nothing, whatever it subscribes to', () => {
    const off = [hook('whk_x', ['*'], { enabled: false, ignore_status: false })];
    assert.deepEqual(route({ event: 'message', payload: chat }, off), []);
    assert.deepEqual(route({ event: 'message', payload: story('from') }, off), []);
  });

  test('* with ignore_status false takes status events too', () => {
    const all = hook('whk_x', ['*'], { ignore_status: false });
    assert.deepEqual(route({ event: 'message.reaction', payload: story('from') }, [all]), [all]);
  });

  test('no webhooks, no routes; input is not changed', () => {
    assert.deepEqual(route({ event: 'message', payload: chat }, []), []);
    const copy = structuredClone(HOOKS);
    route({ event: 'message', payload: chat }, HOOKS);
    assert.deepEqual(HOOKS, copy);
  });
});
