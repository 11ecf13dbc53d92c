/**
 * Ordered delivery per chat across crashes and processes: Herald started as users start it (`npm start`), a receiver
 * failing a third of the attempts, one process SIGKILLed (every process of its start) while chats' deliveries are in
 * flight and restarted; on SQLite one process, on PostgreSQL two and three processes over one schema. At the
 * receiver, for every chat, no two requests overlap and the first successful arrivals are in ingest order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { assertChatOrder, ChatReceiver, chatMessage, seeded } from '../support/chat-order.ts';
import { eventually } from '../support/herald.ts';
import { dropSchema, onPostgres, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

const CHATS = 10;
const PER_CHAT = 10;
/** The lease is DELIVERY_TIMEOUT_MS + 5 s: what a killed process held is taken again ~6 s later. */
const ENV = { DELIVERY_TIMEOUT_MS: '1000', RETRY_SCHEDULE: '0.05,0.05,0.05,0.05,0.05' };

interface Cluster {
  processes: ChildHerald[];
  start(i: number): Promise<ChildHerald>;
}

/** `roles` processes over one data directory (PostgreSQL: one scratch schema), stopped after the test. */
async function cluster(t: TestContext, roles: string[][], env: Record<string, string>): Promise<Cluster> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-chat-order-'));
  const scratch = onPostgres || roles.length > 1 ? await scratchSchema() : null;
  const all = {
    ...ENV,
    ...env,
    ...(scratch ? { DATABASE_URL: scratch.url, SECRET_KEY: 'b'.repeat(64) } : {}),
  };
  const c: Cluster = {
    processes: [],
    start: async (i) => {
      // A restart takes the port of the process it replaces.
      const env = c.processes[i] ? { ...all, PORT: String(c.processes[i].port) } : all;
      c.processes[i] = await spawnHerald(dataDir, env, 60_000, roles[i]);
      return c.processes[i];
    },
  };
  t.after(async () => {
    await Promise.all(c.processes.map((p) => p.kill('SIGKILL', 'all')));
    rmSync(dataDir, { recursive: true, force: true });
    if (scratch) await dropSchema(scratch.schema);
  });
  await Promise.all(roles.map((_, i) => c.start(i)));
  return c;
}

async function orderedWebhook(api: ChildHerald, url: string): Promise<string> {
  const ins = await api.request('POST', '/instances', { name: 'chat-order' });
  assert.equal(ins.status, 201, JSON.stringify(ins.body));
  const base = `/instances/${ins.body.instance_id}/webhooks`;
  const w = await api.request('POST', base, { destination_url: url, events: ['message'], ordering: 'chat' });
  assert.equal(w.status, 201, JSON.stringify(w.body));
  assert.equal(
    (await api.request('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true })).status,
    200,
  );
  return ins.body.instance_id;
}

/**
 * Publishes every chat's messages interleaved, one at a time, through the API processes in turn; kills process
 * `victim` once a third have arrived, and starts it again. Returns each chat's acknowledged ids in order.
 */
async function run(t: TestContext, roles: string[][], apis: number[], victim: number) {
  const seed = Number(process.env.CHAT_ORDER_SEED ?? Date.now() % 100_000);
  t.diagnostic(`seed ${seed} (CHAT_ORDER_SEED replays it)`);
  const random = seeded(seed);
  const receiver = await ChatReceiver.start();
  t.after(() => receiver.close());
  receiver.answer = () => (random() < 0.33 ? 'fail' : 'ok');
  const c = await cluster(t, roles, {});
  const ins = await orderedWebhook(c.processes[apis[0]], receiver.url);

  const chats = Array.from({ length: CHATS }, (_, i) => `4917100${String(i).padStart(5, '0')}@c.us`);
  const accepted = new Map<string, string[]>(chats.map((chat) => [chat, []]));
  const left = chats.flatMap((chat) => Array.from({ length: PER_CHAT }, () => chat));
  let killed = false;
  let restarted: Promise<ChildHerald> | null = null;
  let k = 0;
  while (left.length > 0) {
    const [chat] = left.splice(Math.floor(random() * left.length), 1);
    const n = accepted.get(chat)?.length ?? 0;
    const api = c.processes[apis[k++ % apis.length]];
    const r = await api.request('POST', `/instances/${ins}/events`, chatMessage(chat, n));
    assert.equal(r.status, 202, JSON.stringify(r.body));
    accepted.get(chat)?.push(r.body.event_id);
    if (!killed && receiver.delivered().size >= (CHATS * PER_CHAT) / 3) {
      killed = true;
      t.diagnostic(`SIGKILL of process ${victim} after ${receiver.requests.length} requests`);
      await c.processes[victim].kill('SIGKILL', 'all');
      // A worker comes back while the others carry on; an API process before publishing goes on through it.
      restarted = c.start(victim);
      if (apis.includes(victim)) await restarted;
    }
  }
  if (!killed) {
    await c.processes[victim].kill('SIGKILL', 'all');
    restarted = c.start(victim);
  }
  await restarted;
  const total = CHATS * PER_CHAT;
  const reader = c.processes[apis[0]];
  await eventually(async () => {
    const pending = await reader.request('GET', `/instances/${ins}/deliveries?status=pending&limit=1`);
    return receiver.delivered().size > 0 && pending.body.deliveries?.length === 0 ? true : undefined;
  }, 90_000);
  const checked = assertChatOrder(receiver, accepted);
  const failed = await reader.request('GET', `/instances/${ins}/deliveries?status=failed&limit=200`);
  assert.equal(
    receiver.delivered().size + failed.body.deliveries.length,
    total,
    'every event delivered or failed',
  );
  t.diagnostic(`${checked} requests checked, ${failed.body.deliveries.length} deliveries failed for good`);
}

test('one process, SIGKILLed mid-stream and restarted: each chat in order', async (t) => {
  await run(t, [[]], [0], 0);
});

test('two processes on one PostgreSQL, one SIGKILLed: each chat in order', {
  skip: postgresSkip,
}, async (t) => {
  await run(t, [[], []], [0, 1], 1);
});

test('three processes (api, worker, worker) on one PostgreSQL, a worker SIGKILLed: each chat in order', {
  skip: postgresSkip,
}, async (t) => {
  await run(
    t,
    [
      ['--role', 'api'],
      ['--role', 'worker'],
      ['--role', 'worker'],
    ],
    [0],
    2,
  );
});
