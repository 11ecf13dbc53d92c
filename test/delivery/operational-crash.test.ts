/**
 * Operational events through a crash: Herald started as users start it (`npm start`), killed (SIGKILL, every process
 * of the start) while destinations answer 410 and their webhooks are being disabled and announced, then restarted on
 * the same data. Every webhook.disabled and delivery.failed reaches the operator, and the log holds each exactly once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { allDeliveries } from '../support/child-rig.ts';
import { eventually, messagePayload } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';
import { spawnHerald } from '../support/spawn.ts';

const WEBHOOKS = 30;
/** Answered at once before the kill; the rest are held until it, so that the kill falls among the disables. */
const BEFORE_KILL = 10;

test('SIGKILL while webhooks are disabled by 410s: no operational event lost, none twice in the log', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-ops-crash-'));
  const operator = await TestReceiver.start('/operator');
  const gone = await TestReceiver.start('/gone');
  const held: (() => void)[] = [];
  gone.answer = (_req, n) =>
    n < BEFORE_KILL ? { status: 410 } : new Promise((resolve) => held.push(() => resolve({ status: 410 })));
  const env = {
    DELIVERY_TIMEOUT_MS: '1000',
    OPERATOR_WEBHOOK_URL: operator.url,
    OPERATOR_WEBHOOK_SECRET: 'operator-secret',
  };
  let herald = await spawnHerald(dataDir, env);
  t.after(async () => {
    await herald.kill('SIGKILL', 'all');
    for (const release of held) release();
    await Promise.all([operator.close(), gone.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const ins = await herald.request('POST', '/instances', { name: 'ops-crash' });
  assert.equal(ins.status, 201);
  const instanceId = ins.body.instance_id as string;
  const webhookIds: string[] = [];
  for (let i = 0; i < WEBHOOKS; i++) {
    const base = `/instances/${instanceId}/webhooks`;
    const w = await herald.request('POST', base, {
      destination_url: `${gone.url}/${i}`,
      events: ['message'],
    });
    assert.equal(w.status, 201, JSON.stringify(w.body));
    webhookIds.push(w.body.webhook_id);
    assert.equal(
      (await herald.request('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true })).status,
      200,
    );
  }
  const published = await herald.request('POST', `/instances/${instanceId}/events`, {
    event: 'message',
    payload: messagePayload(),
  });
  assert.equal(published.status, 202);

  // The first disables are being announced; the other attempts are held at the receiver.
  await eventually(async () => (operator.received.length >= 2 && held.length > 0 ? true : undefined), 20_000);
  const killed = await herald.kill('SIGKILL', 'all');
  assert.equal(killed.signal, 'SIGKILL');
  const beforeKill = operator.received.length;
  for (const release of held.splice(0)) release();
  gone.answer = () => ({ status: 410 });

  herald = await spawnHerald(dataDir, { ...env, PORT: String(herald.port) });
  const about = (kind: string) =>
    new Set(operator.received.filter((r) => r.body?.event === kind).map((r) => r.body.payload.webhook_id));
  await eventually(
    async () =>
      about('webhook.disabled').size === WEBHOOKS && about('delivery.failed').size === WEBHOOKS
        ? true
        : undefined,
    60_000,
  );
  t.diagnostic(`${beforeKill} operational deliveries had arrived at the kill, of ${2 * WEBHOOKS}`);
  assert.ok(beforeKill < 2 * WEBHOOKS, 'the kill fell among the announcements');
  assert.deepEqual([...about('webhook.disabled')].sort(), [...webhookIds].sort());

  // The log: exactly one event of each kind per webhook, each delivered to the operator.
  const logged = await allDeliveries(herald, instanceId, '&webhook_id=whk_operator');
  for (const kind of ['webhook.disabled', 'delivery.failed']) {
    const ofKind = logged.filter((d) => d.event === kind);
    assert.equal(ofKind.length, WEBHOOKS, `${kind}: one per webhook in the log`);
    assert.equal(new Set(ofKind.map((d) => d.event_id)).size, WEBHOOKS, `${kind}: each its own event`);
  }
  await eventually(async () => {
    const now = await allDeliveries(herald, instanceId, '&webhook_id=whk_operator&status=delivered');
    return now.length === 2 * WEBHOOKS ? true : undefined;
  }, 30_000);
});
