/**
 * `herald simulate --engine evolution` as a newcomer runs it: a real Herald process, the simulation posting Evolution
 * API's bodies (files inline, as Evolution's base64 setting sends them) to the Evolution endpoint. Every kind Herald
 * maps from Evolution arrives, the media reaches the states Evolution's bodies can give, and the instance works.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../support/cli.ts';
import { ADMIN_KEY, eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { spawnHerald } from '../support/spawn.ts';

/** The kinds Herald makes of what Evolution sends (the simulation's share of them). */
const FROM_EVOLUTION = [
  'session.status',
  'message',
  'message.any',
  'message.ack',
  'message.reaction',
  'message.edited',
  'message.revoked',
  'group.join',
  'group.update',
  'group.participants',
  'call.received',
  'call.accepted',
  'call.rejected',
  'label.upsert',
  'label.deleted',
  'label.chat.added',
  'label.chat.deleted',
  'presence.update',
];

test('simulate --engine evolution: Evolution bodies, files inline, reach a webhook in Herald kinds', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-sim-evolution-'));
  const receiver = await TestReceiver.start();
  const herald = await spawnHerald(dataDir, { MEDIA_MAX_BYTES: String(256 * 1024) });
  t.after(async () => {
    await herald.kill('SIGTERM');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const ins = (await herald.request('POST', '/instances', { name: 'evolution' })).body.instance_id;
  const whk = (
    await herald.request('POST', `/instances/${ins}/webhooks`, {
      destination_url: receiver.url,
      events: ['*'],
      ignore_status: false,
    })
  ).body.webhook_id;
  await herald.request('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { enabled: true });

  const sim = runCli(
    [
      'simulate',
      '--engine',
      'evolution',
      '--instance',
      ins,
      '--rate',
      '20/s',
      '--duration',
      '1s',
      '--seed',
      '5',
    ],
    { HERALD_URL: herald.url, HERALD_API_KEY: ADMIN_KEY },
  );
  const { code } = await sim.exited;
  assert.equal(code, 0, sim.output());
  assert.match(sim.output(), /as Evolution API/);
  const published = Number(/Published (\d+) events/.exec(sim.output())?.[1]);
  const got = await receiver.waitFor(published, 30_000);
  const kinds = new Set(got.map((r) => r.body.event));
  assert.deepEqual([...kinds].sort(), [...FROM_EVOLUTION].sort());
  assert.ok(
    got.every((r) => '_evolution' in r.body.payload),
    "every payload carries Evolution's data",
  );
  const media = new Set(got.flatMap((r) => (r.body.payload.media ? [r.body.payload.media.status] : [])));
  assert.deepEqual([...media].sort(), ['outgoing', 'ready', 'too_large', 'unavailable']);
  const ready = got.find((r) => r.body.payload.media?.status === 'ready');
  const file = await fetch(ready?.body.payload.media.url);
  assert.equal(file.status, 200);
  assert.equal((await file.arrayBuffer()).byteLength, 24 * 1024);
  const incoming = got.filter(
    (r) => r.body.event === 'message' && r.body.payload.from !== 'status@broadcast',
  );
  assert.ok(
    incoming.every((r) => /^\d+$/.test(r.body.payload.from_phone)),
    'from_phone filled by Herald',
  );
  const status = await eventually(async () => {
    const i = (await herald.request('GET', `/instances/${ins}`)).body.instance;
    return i.status === 'WORKING' ? i : undefined;
  });
  assert.match(status.phone, /^\d+$/, "the session's phone, from Evolution's wuid");
});
