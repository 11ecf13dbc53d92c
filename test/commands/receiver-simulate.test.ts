/**
 * `herald receiver` and `herald simulate` as real processes against a real Herald (also a process): the simulated
 * session reaches the reference receiver with every kind of the catalog, signed and verified; the receiver
 * ignores a replayed event and answers 401 to a tampered body and to a 301-second-old timestamp.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { envDefaults } from '../../src/commands/simulate.ts';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import { EVENT_KINDS } from '../../src/domain/events.ts';

const SESSION_KINDS = EVENT_KINDS.filter((k) => !OPERATIONAL_KINDS.includes(k));

import { type CliProcess, runCli } from '../support/cli.ts';
import { ADMIN_KEY, eventually } from '../support/herald.ts';
import { signedPost } from '../support/signed-post.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

const SECRET = 'whsec_simulated_session';
const dataDir = mkdtempSync(join(tmpdir(), 'herald-sim-'));
let herald: ChildHerald;
let receiver: CliProcess;
let receiverUrl = '';
let instanceId = '';

before(async () => {
  herald = await spawnHerald(dataDir, { RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2' });
  receiver = runCli(['receiver', '--port', '0', '--secret', SECRET]);
  receiverUrl = (await receiver.waitFor(/Reference receiver on (\S+)/))[1];
  instanceId = (await herald.request('POST', '/instances', { name: 'simulated' })).body.instance_id;
  const created = await herald.request('POST', `/instances/${instanceId}/webhooks`, {
    destination_url: receiverUrl,
    events: ['*'],
    client_sign_secret: SECRET,
    ignore_status: false, // stories from status@broadcast too
  });
  const hook = `/instances/${instanceId}/webhooks/${created.body.webhook_id}`;
  assert.equal((await herald.request('POST', `${hook}/enabled`, { enabled: true })).status, 200);
});

after(async () => {
  await receiver?.stop();
  await herald?.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

/** Lines the receiver printed for deliveries it accepted: [kind, event_id]. */
function accepted(): [string, string][] {
  return [...receiver.output().matchAll(/ 200 {2}(\S+) +(evt_\S+) {2}verified/g)].map((m) => [m[1], m[2]]);
}

test('a simulated session reaches the reference receiver with every kind of the catalog, all verified', async () => {
  const sim = runCli(
    ['simulate', '--instance', instanceId, '--rate', '100/s', '--duration', '2s', '--seed', '1'],
    { HERALD_URL: herald.url, HERALD_API_KEY: ADMIN_KEY },
  );
  const { code } = await sim.exited;
  assert.equal(code, 0, sim.output());
  const published = Number(/Published (\d+) events/.exec(sim.output())?.[1]);
  assert.ok(published >= 100, `published ${published} events:\n${sim.output()}`);
  assert.match(sim.output(), /\d+ deliveries queued/);
  // Every event goes to the one webhook subscribed to '*', so the receiver sees exactly as many.
  const lines = await eventually(
    async () => (accepted().length >= published ? accepted() : undefined),
    30_000,
    `${published} deliveries at the receiver`,
  );
  assert.equal(new Set(lines.map(([, id]) => id)).size, published, 'each event once');
  // Every kind a session sends: Herald's operational kinds are its own, never published.
  assert.deepEqual([...new Set(lines.map(([kind]) => kind))].sort(), SESSION_KINDS.sort());
  assert.doesNotMatch(receiver.output(), / 401 /);
});

test('the receiver ignores a replayed delivery and refuses a tampered or 301-second-old one', async () => {
  const list = await herald.request('GET', `/instances/${instanceId}/deliveries?event=message&limit=1`);
  const { delivery_id, event_id } = list.body.deliveries[0];
  const detail = await herald.request('GET', `/instances/${instanceId}/deliveries/${delivery_id}`);
  const body: string = detail.body.delivery.request_body;

  const post = (rawBody: string, ageSeconds = 0, signed = rawBody) =>
    signedPost(receiverUrl, { secret: SECRET, eventId: event_id, body: rawBody, signed, ageSeconds });

  // The same bytes with a fresh timestamp and signature: exactly what one more attempt of Herald sends.
  const replay = await post(body);
  assert.equal(replay.status, 200);
  assert.deepEqual(await replay.json(), { received: true, duplicate: true });
  await receiver.waitFor(new RegExp(`${event_id} {2}verified {2}\\(duplicate, ignored\\)`));

  const tampered = await post(body.replace('"payload":{', '"payload":{"x":1,'), 0, body);
  assert.equal(tampered.status, 401);
  assert.equal((await tampered.json()).error, 'signature_mismatch');

  const old = await post(body, 301);
  assert.equal(old.status, 401);
  assert.equal((await old.json()).error, 'timestamp_too_old');
  await receiver.waitFor(/ 401 {2}timestamp_too_old/);
});

test('a receiver failing on purpose makes Herald retry until each delivery gets through', async () => {
  const flaky = runCli(['receiver', '--port', '0', '--secret', SECRET, '--fail-rate', '0.5', '--seed', '3']);
  try {
    const url = (await flaky.waitFor(/Reference receiver on (\S+)/))[1];
    const ins = (await herald.request('POST', '/instances', { name: 'flaky' })).body.instance_id;
    const created = await herald.request('POST', `/instances/${ins}/webhooks`, {
      destination_url: url,
      events: ['message.ack'],
      client_sign_secret: SECRET,
    });
    await herald.request('POST', `/instances/${ins}/webhooks/${created.body.webhook_id}/enabled`, {
      enabled: true,
    });
    const ack = { id: 'true_1@c.us_A', from: '1@c.us', to: '2@c.us', ack: 1, ackName: 'SERVER' };
    const events = Array.from({ length: 10 }, () => ({ event: 'message.ack', payload: ack }));
    assert.equal((await herald.request('POST', `/instances/${ins}/events/batch`, { events })).status, 202);
    const deliveries = await eventually(
      async () => {
        const r = await herald.request('GET', `/instances/${ins}/deliveries`);
        const all = r.body.deliveries as { status: string; attempt_count: number }[];
        return all.length === 10 && all.every((d) => d.status === 'delivered') ? all : undefined;
      },
      30_000,
      'every delivery delivered',
    );
    assert.ok(
      deliveries.some((d) => d.attempt_count > 1),
      'some deliveries needed a retry',
    );
    assert.match(flaky.output(), / 500 {2}message\.ack +evt_\S+ {2}verified {2}\(failed on purpose\)/);
  } finally {
    await flaky.stop();
  }
});

test('herald receiver --status 410 alone answers every delivery 410, and Herald disables the webhook', async () => {
  const gone = runCli(['receiver', '--port', '0', '--status', '410']);
  try {
    const url = (await gone.waitFor(/Reference receiver on (\S+) \(.*failing 100% with 410\)/))[1];
    const ins = (await herald.request('POST', '/instances', { name: 'gone' })).body.instance_id;
    const whk = (
      await herald.request('POST', `/instances/${ins}/webhooks`, { destination_url: url, events: ['*'] })
    ).body.webhook_id;
    await herald.request('POST', `/instances/${ins}/webhooks/${whk}/enabled`, { enabled: true });
    await herald.request('POST', `/instances/${ins}/events`, {
      event: 'session.status',
      payload: { status: 'WORKING' },
    });
    const webhook = await eventually(async () => {
      const w = (await herald.request('GET', `/instances/${ins}/webhooks/${whk}`)).body.webhook;
      return w.enabled ? undefined : w;
    });
    assert.equal(webhook.disabled_reason, 'gone');
    assert.match(gone.output(), / 410 {2}session\.status +evt_\S+ {2}unsigned {2}\(failed on purpose\)/);
  } finally {
    await gone.stop();
  }
});

test("simulate takes the walk-through's HERALD and KEY when HERALD_URL and HERALD_API_KEY are unset", async () => {
  const sim = runCli(['simulate', '--instance', instanceId, '--rate', '50/s', '--duration', '500ms'], {
    HERALD: herald.url,
    KEY: ADMIN_KEY,
  });
  const { code } = await sim.exited;
  assert.equal(code, 0, sim.output());
  assert.match(sim.output(), /Published [1-9]\d* events/);
});

test('simulate: HERALD_URL and HERALD_API_KEY win over HERALD and KEY; an empty one counts as unset', () => {
  assert.deepEqual(
    envDefaults({ HERALD_URL: 'http://a:1', HERALD: 'http://b:2', HERALD_API_KEY: 'k1', KEY: 'k2' }),
    { url: 'http://a:1', key: 'k1' },
  );
  assert.deepEqual(envDefaults({ HERALD_URL: '', HERALD: 'http://b:2', KEY: 'k2' }), {
    url: 'http://b:2',
    key: 'k2',
  });
  assert.deepEqual(envDefaults({}), { url: 'http://127.0.0.1:8080', key: undefined });
});
