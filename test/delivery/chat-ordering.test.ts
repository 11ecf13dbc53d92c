/**
 * Ordered delivery per chat (`ordering: "chat"`), property-style: many chats, a receiver that fails a random third of
 * the attempts and hangs on some, a short retry schedule. At the receiver, for every chat, no two requests overlap
 * and the first successful arrivals are in ingest order; a chat held up does not hold up the others; redelivery and
 * bulk replay go after the chat's waiting deliveries. Run on SQLite and, in the second pass, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import { assertChatOrder, ChatReceiver, chatMessage, seeded } from '../support/chat-order.ts';
import { eventually, startTestHerald, type TestHerald } from '../support/herald.ts';

/** A short timeout, for the attempts that hang; and a long one, for the tests that hold an attempt on purpose. */
let quick: TestHerald;
let patient: TestHerald;
let h: TestHerald;
before(async () => {
  quick = await startTestHerald({ RETRY_SCHEDULE: '0.03,0.03,0.03,0.03,0.03', DELIVERY_TIMEOUT_MS: '300' });
  patient = await startTestHerald({
    RETRY_SCHEDULE: '0.03,0.03,0.03,0.03,0.03',
    DELIVERY_TIMEOUT_MS: '60000',
  });
  h = patient;
});
after(() => Promise.all([quick.close(), patient.close()]));

const chatId = (i: number) => `4917000${String(i).padStart(5, '0')}@c.us`;

async function orderedHook(t: TestContext, ordering: 'chat' | 'none' = 'chat') {
  const ins = await h.createInstance();
  const receiver = await ChatReceiver.start();
  t.after(() => receiver.close());
  const webhookId = await h.createWebhook(ins, {
    destination_url: receiver.url,
    events: ['message'],
    ordering,
  });
  return { ins, receiver, webhookId };
}

/** Publishes `perChat` messages to each of `chats`, interleaved at random, one at a time: the ingest order. */
async function publishInterleaved(ins: string, chats: string[], perChat: number, random: () => number) {
  const accepted = new Map<string, string[]>(chats.map((c) => [c, []]));
  const left = chats.flatMap((c) => Array.from({ length: perChat }, () => c));
  const sent = new Map<string, number>();
  while (left.length > 0) {
    const [chat] = left.splice(Math.floor(random() * left.length), 1);
    const n = sent.get(chat) ?? 0;
    sent.set(chat, n + 1);
    const r = await h.publish(ins, chatMessage(chat, n));
    assert.equal(r.status, 202, JSON.stringify(r.body));
    accepted.get(chat)?.push(r.body.event_id);
  }
  return accepted;
}

async function deliveries(ins: string, query = '') {
  const all: any[] = [];
  let cursor = '';
  for (;;) {
    const r = await h.request('GET', `/instances/${ins}/deliveries?limit=200${query}${cursor}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    all.push(...r.body.deliveries);
    if (!r.body.next_cursor) return all;
    cursor = `&cursor=${r.body.next_cursor}`;
  }
}

const settled = (ins: string) =>
  eventually(
    async () => ((await deliveries(ins, '&status=pending')).length === 0 ? true : undefined),
    60_000,
  );

describe('ordering: "chat"', () => {
  test('a third of attempts failing, some hanging: per chat no overlap, first successes in ingest order', async (t) => {
    const seed = Number(process.env.CHAT_ORDER_SEED ?? Date.now() % 100_000);
    t.diagnostic(`seed ${seed} (CHAT_ORDER_SEED replays it)`);
    const random = seeded(seed);
    h = quick;
    t.after(() => {
      h = patient;
    });
    const { ins, receiver } = await orderedHook(t);
    receiver.answer = () => {
      const x = random();
      return x < 0.33 ? 'fail' : x < 0.36 ? 'hang' : 'ok';
    };
    const chats = Array.from({ length: 12 }, (_, i) => chatId(i));
    const accepted = await publishInterleaved(ins, chats, 8, random);
    await settled(ins);
    const checked = assertChatOrder(receiver, accepted);
    const all = await deliveries(ins);
    const failed = all.filter((d) => d.status === 'failed').length;
    t.diagnostic(`${checked} requests checked; ${failed} of ${all.length} deliveries failed for good`);
    assert.ok(
      receiver.requests.some((r) => !r.ok),
      'some attempts failed',
    );
    assert.equal(receiver.delivered().size + failed, 96);
  });

  test('a chat held up waits alone: the other chats finish at their own pace; the waiting say for whom', async (t) => {
    const { ins, receiver } = await orderedHook(t);
    const stuck = chatId(99);
    let release: (() => void) | null = null;
    const held = new Promise<'ok'>((resolve) => {
      release = () => resolve('ok');
    });
    receiver.answer = (chat, _id, n) => (chat === stuck && n === 0 ? held : 'ok');
    const chats = [stuck, ...Array.from({ length: 6 }, (_, i) => chatId(i))];
    const accepted = await publishInterleaved(ins, chats, 5, seeded(7));
    const others = chats.slice(1).flatMap((c) => accepted.get(c) ?? []);
    await eventually(
      async () => (others.every((id) => receiver.delivered().has(id)) ? true : undefined),
      30_000,
    );

    // Meanwhile the stuck chat's first is in flight and the four after it wait for it, in the API.
    const queue = await deliveries(ins, `&chat=${encodeURIComponent(stuck)}&status=pending`);
    assert.equal(queue.length, 5);
    const head = queue.find((d) => d.event_id === accepted.get(stuck)?.[0]);
    assert.ok(head);
    assert.equal(head.waiting_for, null);
    assert.deepEqual(
      queue.filter((d) => d !== head).map((d) => d.waiting_for),
      [head.delivery_id, head.delivery_id, head.delivery_id, head.delivery_id],
    );
    assert.equal(receiver.requests.filter((r) => r.chat === stuck).length, 1, 'nothing else of it was sent');
    (release as unknown as () => void)();
    await settled(ins);
    assertChatOrder(receiver, accepted);
  });

  test('redelivery goes after the chat’s waiting deliveries', async (t) => {
    const { ins, receiver, webhookId } = await orderedHook(t);
    const chat = chatId(1);
    let firstFails = true;
    let release: (() => void) | null = null;
    const held = new Promise<'ok'>((resolve) => {
      release = () => resolve('ok');
    });
    receiver.answer = (_chat, _id, n) => {
      if (firstFails && n < 6) return 'fail'; // the first delivery's six attempts
      if (n === 6) return held; // the second waits here while the first is redelivered
      return 'ok';
    };
    const first = (await h.publish(ins, chatMessage(chat, 0))).body.event_id;
    const [failed] = await eventually(async () => {
      const d = await deliveries(ins, `&event_id=${first}&status=failed`);
      return d.length === 1 ? d : undefined;
    });
    firstFails = false;
    const second = (await h.publish(ins, chatMessage(chat, 1))).body.event_id;
    const third = (await h.publish(ins, chatMessage(chat, 2))).body.event_id;
    await eventually(async () => (receiver.requests.length === 7 ? true : undefined));
    const redo = await h.request('POST', `/instances/${ins}/deliveries/${failed.delivery_id}/redeliver`);
    assert.equal(redo.status, 202, JSON.stringify(redo.body));
    assert.notEqual(redo.body.delivery.waiting_for, null, 'it waits behind the chat’s pending ones');
    (release as unknown as () => void)();
    await settled(ins);
    const successes = receiver.requests.filter((r) => r.ok).map((r) => r.event_id);
    assert.deepEqual(successes, [second, third, first]);
    const hook = await h.request('GET', `/instances/${ins}/webhooks/${webhookId}`);
    assert.equal(hook.body.webhook.ordering, 'chat');
  });

  test('bulk replay puts the chat’s failed deliveries after its waiting ones, in their own order', async (t) => {
    const { ins, receiver, webhookId } = await orderedHook(t);
    const chat = chatId(3);
    let release: (() => void) | null = null;
    const held = new Promise<'ok'>((resolve) => {
      release = () => resolve('ok');
    });
    // Two messages fail their six attempts each; the third's first request is held while the replay is asked for.
    receiver.answer = (_c, _id, n) => (n < 12 ? 'fail' : n === 12 ? held : 'ok');
    const failed = [
      (await h.publish(ins, chatMessage(chat, 0))).body.event_id,
      (await h.publish(ins, chatMessage(chat, 1))).body.event_id,
    ];
    await eventually(
      async () => ((await deliveries(ins, '&status=failed')).length === 2 ? true : undefined),
      15_000,
    );
    const waiting = [
      (await h.publish(ins, chatMessage(chat, 2))).body.event_id,
      (await h.publish(ins, chatMessage(chat, 3))).body.event_id,
    ];
    await eventually(async () => (receiver.requests.length === 13 ? true : undefined));
    const replay = await h.request('POST', `/instances/${ins}/deliveries/redeliver`, {
      body: { webhook_id: webhookId },
    });
    assert.equal(replay.status, 202, JSON.stringify(replay.body));
    assert.equal(replay.body.redelivered, 2);
    const queue = await deliveries(ins, `&status=pending&chat=${encodeURIComponent(chat)}`);
    assert.equal(queue.length, 4);
    assert.equal(
      queue.filter((d) => failed.includes(d.event_id) && d.waiting_for !== null).length,
      2,
      'the replayed ones wait for the chat’s head',
    );
    (release as unknown as () => void)();
    await settled(ins);
    const successes = receiver.requests.filter((r) => r.ok).map((r) => r.event_id);
    assert.deepEqual(successes, [...waiting, ...failed]);
  });

  test('back to "none": the waiting deliveries are released at once', async (t) => {
    const { ins, receiver, webhookId } = await orderedHook(t);
    const chat = chatId(2);
    let release: (() => void) | null = null;
    const held = new Promise<'ok'>((resolve) => {
      release = () => resolve('ok');
    });
    receiver.answer = (_c, _id, n) => (n === 0 ? held : 'ok');
    for (let n = 0; n < 4; n++) await h.publish(ins, chatMessage(chat, n));
    await eventually(async () => (receiver.requests.length === 1 ? true : undefined));
    const patch = await h.request('PATCH', `/instances/${ins}/webhooks/${webhookId}`, {
      body: { destination_url: receiver.url, events: ['message'], ordering: 'none' },
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    await eventually(async () => (receiver.delivered().size === 3 ? true : undefined), 10_000);
    (release as unknown as () => void)();
    await settled(ins);
  });

  test('a lone chat: each next delivery starts as soon as the one before is answered, not at the next round', async (t) => {
    // Nothing but the outcome makes the next due: without a wake-up, the dispatcher found it only at its next round
    // (a second later), and a lone chat went at one delivery a second.
    const { ins, receiver } = await orderedHook(t);
    const chat = chatId(7);
    for (let n = 0; n < 10; n++) await h.publish(ins, chatMessage(chat, n));
    await settled(ins);
    const gaps = receiver.requests.slice(1).map((r, i) => r.start - (receiver.requests[i].end ?? r.start));
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
    t.diagnostic(`gaps between one answer and the next request: median ${median.toFixed(1)} ms`);
    assert.ok(median < 500, `median gap ${median.toFixed(1)} ms`);
  });

  test('an unknown ordering is a 400 naming the field', async () => {
    const ins = await h.createInstance();
    const r = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: { destination_url: 'https://hooks.example.com/x', events: ['message'], ordering: 'fifo' },
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.details[0].field, 'ordering');
    assert.match(r.body.error.details[0].message, /none|chat/);
  });
});
