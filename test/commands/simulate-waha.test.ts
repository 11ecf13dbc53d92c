/**
 * `herald simulate --engine waha` as a newcomer runs it: a real Herald process with an engine HMAC key and
 * ENGINE_MEDIA_HEADERS, the simulation posting WAHA's bodies (signed) to the engine endpoint and serving media from
 * its own file server. Every WAHA kind arrives, and the media reaches every state the seed names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import { EVENT_KINDS } from '../../src/domain/events.ts';
import { runCli } from '../support/cli.ts';
import { ADMIN_KEY, eventually } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { spawnHerald } from '../support/spawn.ts';

test('simulate --engine waha: WAHA bodies, signed, with media from its file server, reach a webhook normalised', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-sim-waha-'));
  const receiver = await TestReceiver.start();
  const mediaPort = await freePort();
  const herald = await spawnHerald(dataDir, {
    ENGINE_MEDIA_HEADERS: 'X-Api-Key: waha-demo-key',
    ENGINE_MEDIA_PREFIXES: `http://127.0.0.1:${mediaPort}/api/files/`,
    MEDIA_MAX_BYTES: String(256 * 1024),
  });
  t.after(async () => {
    await herald.kill('SIGTERM');
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const ins = (await herald.request('POST', '/instances', { name: 'waha' })).body.instance_id;
  assert.equal(
    (await herald.request('PATCH', `/instances/${ins}`, { engine_hmac_key: 'hmac-demo' })).status,
    200,
  );
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
      'waha',
      '--instance',
      ins,
      '--rate',
      '20/s',
      '--duration',
      '1s',
      '--seed',
      '5',
      '--hmac-key',
      'hmac-demo',
      '--media-api-key',
      'waha-demo-key',
      '--media-port',
      String(mediaPort),
    ],
    { HERALD_URL: herald.url, HERALD_API_KEY: ADMIN_KEY },
  );
  const { code } = await sim.exited;
  assert.equal(code, 0, sim.output());
  const published = Number(/Published (\d+) events/.exec(sim.output())?.[1]);
  assert.match(sim.output(), /Engine file server: [1-9]\d* files downloaded by Herald, 0 refused/);
  const got = await receiver.waitFor(published, 30_000);
  const kinds = new Set(got.map((r) => r.body.event));
  // Herald's own kinds, which WAHA never sends: message.unknown, the older group shapes, the operational events.
  const fromWaha = EVENT_KINDS.filter(
    (k) => !['message.unknown', 'group.update', 'group.participants', ...OPERATIONAL_KINDS].includes(k),
  );
  assert.deepEqual([...kinds].sort(), fromWaha.sort());
  const media = new Set(got.flatMap((r) => (r.body.payload.media ? [r.body.payload.media.status] : [])));
  assert.deepEqual([...media].sort(), ['failed', 'outgoing', 'ready', 'too_large', 'unavailable']);
  const incoming = got.filter(
    (r) => r.body.event === 'message' && r.body.payload.from !== 'status@broadcast',
  );
  assert.ok(
    incoming.every((r) => /^\d+$/.test(r.body.payload.from_phone)),
    'from_phone filled by Herald',
  );
  const ready = got.find((r) => r.body.payload.media?.status === 'ready');
  const file = await fetch(ready?.body.payload.media.url);
  assert.equal(file.status, 200);
  assert.equal((await file.arrayBuffer()).byteLength, 24 * 1024);
  const status = await eventually(async () => {
    const i = (await herald.request('GET', `/instances/${ins}`)).body.instance;
    return i.status === 'WORKING' ? i : undefined;
  });
  assert.match(status.phone, /^\d+$/, "the session's phone, from me.id");
});

/** A port free now (the file server takes it a moment later), so that Herald can be started with its prefix. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
