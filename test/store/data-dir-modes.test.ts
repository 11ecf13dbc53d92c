/**
 * DATA_DIR holds message bodies, phone numbers, key hashes and media: a real Herald (child process, the CLI) leaves
 * nothing in it that its group or other users may read, whether it makes DATA_DIR itself or finds one from before
 * with looser modes.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { apiRequest, eventually, messagePayload } from '../support/herald.ts';
import { onPostgres } from '../support/postgres.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

/** Every path under `dir` (itself included) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const all = new Map<string, number>([[dir, statSync(dir).mode & 0o777]]);
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(e.parentPath, e.name);
    all.set(path, statSync(path).mode & 0o777);
  }
  return all;
}

const open = (m: Map<string, number>) =>
  [...m].filter(([, mode]) => mode & 0o077).map(([p, mode]) => `${mode.toString(8)} ${p}`);

let receiver: TestReceiver;
let umask: number;
before(async () => {
  // What a default system gives: files 0644, folders 0755, unless Herald says otherwise.
  umask = process.umask(0o022);
  receiver = await TestReceiver.start();
});
after(async () => {
  process.umask(umask);
  await receiver.close();
});

/** Takes Herald through a message with a body, an uploaded file and a delivery, so that every kind of file exists. */
async function use(h: ChildHerald): Promise<void> {
  const ok = async (r: Promise<{ status: number; body: any }>, status: number) => {
    const reply = await r;
    assert.equal(reply.status, status, JSON.stringify(reply.body));
    return reply.body;
  };
  const ins = (await ok(h.request('POST', '/instances', { name: 'modes' }), 201)).instance_id;
  const hook = await ok(
    h.request('POST', `/instances/${ins}/webhooks`, { destination_url: receiver.url, events: ['message'] }),
    201,
  );
  await ok(
    h.request('POST', `/instances/${ins}/webhooks/${hook.webhook_id}/enabled`, { enabled: true }),
    200,
  );
  const png = new Uint8Array([137, 80, 78, 71]);
  await ok(
    apiRequest(h.url, 'POST', `/instances/${ins}/media`, { rawBody: png, contentType: 'image/png' }),
    201,
  );
  const before = receiver.received.length;
  const payload = messagePayload({ body: 'private words', from_phone: '491701234567' });
  await ok(h.request('POST', `/instances/${ins}/events`, { event: 'message', payload }), 202);
  await receiver.waitFor(before + 1);
}

test('a DATA_DIR Herald creates holds nothing its group or others may read', async () => {
  const parent = mkdtempSync(join(tmpdir(), 'herald-modes-'));
  chmodSync(parent, 0o755);
  const dataDir = join(parent, 'data');
  // cwd is the parent: DATA_DIR does not exist until Herald makes it.
  const h = await spawnHerald(parent, { DATA_DIR: dataDir });
  try {
    await use(h);
    const m = modes(dataDir);
    // While Herald runs, so that SQLite's -wal and -shm are there to look at.
    if (!onPostgres) assert.ok(m.has(join(dataDir, 'herald.db-wal')), [...m.keys()].join('\n'));
    assert.ok(m.has(join(dataDir, 'media', 'files')), [...m.keys()].join('\n'));
    assert.deepEqual(open(m), []);
  } finally {
    await h.kill('SIGTERM');
    rmSync(parent, { recursive: true, force: true });
  }
});

test('a DATA_DIR from before with looser modes is made private at start, and the log says so', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-modes-'));
  const first = await spawnHerald(dataDir);
  try {
    await use(first);
  } finally {
    await first.kill('SIGTERM');
  }
  // As an older Herald, or a copy from a backup, would have left it.
  for (const [path] of modes(dataDir)) {
    chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
  }
  mkdirSync(join(dataDir, 'media', 'files'), { recursive: true });
  assert.notDeepEqual(open(modes(dataDir)), []);

  const h = await spawnHerald(dataDir);
  try {
    await use(h);
    assert.deepEqual(open(modes(dataDir)), []);
    await eventually(async () => (/group and other permissions removed/.test(h.output()) ? true : undefined));
  } finally {
    await h.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
