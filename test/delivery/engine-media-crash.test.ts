/**
 * Engine media is a durable job: Herald killed (SIGKILL) while it downloads an engine's files, then restarted on
 * the same data, settles every acknowledged event's media and delivers it, still knowing that the events came through
 * the engine endpoint (the resumed downloads carry ENGINE_MEDIA_HEADERS). Runs on SQLite, and on PostgreSQL in the
 * second pass of `npm test` (where the restarted process takes the jobs over once their lease runs out).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pngImage } from '../media/files.ts';
import { EngineFiles, postWaha, wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { spawnHerald } from '../support/spawn.ts';

/** Long enough that every download is still waiting for its answer when Herald is killed. */
const env = (files: EngineFiles) => ({
  DELIVERY_TIMEOUT_MS: '4000',
  ENGINE_MEDIA_HEADERS: 'X-Api-Key: crash-key',
  ENGINE_MEDIA_PREFIXES: files.prefix,
});
const EVENTS = 6;

test('a SIGKILL mid-download loses no acknowledged event: each is delivered once its media settles', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-media-crash-'));
  const files = await EngineFiles.start();
  const receiver = await TestReceiver.start();
  // Started as `npx herald serve`, killed by the PID npx has: the launcher stops Herald when npm is gone.
  let herald = await spawnHerald(dataDir, env(files), 15_000, [], 'npx herald');
  t.after(async () => {
    await herald.kill('SIGKILL');
    await Promise.all([files.close(), receiver.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });
  const ins = (await herald.request('POST', '/instances', { name: 'media crash' })).body.instance_id;
  const webhook = await herald.request('POST', `/instances/${ins}/webhooks`, {
    destination_url: receiver.url,
    events: ['message'],
  });
  await herald.request('POST', `/instances/${ins}/webhooks/${webhook.body.webhook_id}/enabled`, {
    enabled: true,
  });

  // The engine's file server does not answer yet: every download is under way when Herald dies.
  const png = pngImage(24);
  const urls = Array.from({ length: EVENTS }, (_, i) => files.serve(`crash-${i}.png`, 'hang'));
  const acked = new Map<string, string>();
  for (const [i, url] of urls.entries()) {
    const body = wahaBody('message', {
      id: `false_491701234567@c.us_CRASH${i}`,
      from: '491701234567@c.us',
      fromMe: false,
      body: '',
      hasMedia: true,
      media: { url, mimetype: 'image/png', filename: null, error: null },
    });
    const res = await postWaha(herald.url, ins, body, { key: ADMIN_KEY });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    acked.set(res.body.event_id, url);
  }
  await eventually(async () => (files.requests.length > 0 ? true : undefined), 5000, 'a download under way');
  await herald.kill('SIGKILL');
  assert.equal(receiver.received.length, 0, 'nothing was delivered before its media settled');

  for (const [i] of urls.entries()) files.serve(`crash-${i}.png`, { bytes: png, type: 'image/png' });
  const before = files.requests.length;
  herald = await spawnHerald(dataDir, env(files));
  await receiver.waitFor(EVENTS, 30_000);
  const resumed = files.requests.slice(before);
  assert.ok(resumed.length >= EVENTS, `every download made again: ${resumed.length}`);
  assert.ok(
    resumed.every((r) => r.headers['x-api-key'] === 'crash-key'),
    'a resumed download still knows its event came through the engine endpoint',
  );
  const byId = new Map(receiver.received.map((r) => [r.body.event_id, r.body.payload.media]));
  assert.deepEqual([...byId.keys()].sort(), [...acked.keys()].sort());
  for (const media of byId.values()) {
    assert.equal(media.status, 'ready');
    const download = await fetch(media.url);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), png);
  }
});
