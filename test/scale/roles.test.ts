/**
 * `herald serve --role`: the flag is checked; an api process never delivers; a worker delivers, answers health
 * probes and nothing else; an idle worker is woken by NOTIFY at once, not by its poll.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ADMIN_KEY, apiRequest, eventually, messagePayload } from '../support/herald.ts';
import { dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

function serve(args: string[], env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-role-'));
  try {
    return spawnSync(process.execPath, [CLI, 'serve', ...args], {
      cwd: dataDir,
      env: { PATH: process.env.PATH ?? '', PORT: '0', DATA_DIR: dataDir, ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('an unknown role is refused with exit code 2, naming the choices', () => {
  const r = serve(['--role', 'dispatcher']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--role must be one of all, api, worker, got "dispatcher"/);
});

test('api and worker roles need DATABASE_URL: SQLite serves one process', () => {
  for (const role of ['api', 'worker']) {
    const r = serve(['--role', role]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, new RegExp(`--role ${role} needs DATABASE_URL`));
  }
});

describe('roles on PostgreSQL', { skip: postgresSkip }, () => {
  let dataDir = '';
  let schema = '';
  let env: Record<string, string> = {};
  let api: ChildHerald;
  const children: ChildHerald[] = [];
  let receiver: TestReceiver;
  let instanceId = '';

  before(async () => {
    const scratch = await scratchSchema();
    schema = scratch.schema;
    dataDir = mkdtempSync(join(tmpdir(), 'herald-roles-'));
    env = { DATABASE_URL: scratch.url, SECRET_KEY: 'c'.repeat(64) };
    api = await spawnHerald(dataDir, env, 60_000, ['--role', 'api']);
    children.push(api);
    receiver = await TestReceiver.start();
    const ins = await api.request('POST', '/instances', { name: 'roles' });
    instanceId = ins.body.instance_id;
    const base = `/instances/${instanceId}/webhooks`;
    const w = await api.request('POST', base, { destination_url: receiver.url, events: ['message'] });
    assert.equal(
      (await api.request('POST', `${base}/${w.body.webhook_id}/enabled`, { enabled: true })).status,
      200,
    );
  });

  after(async () => {
    await Promise.all(children.map((c) => c.kill('SIGKILL')));
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (schema) await dropSchema(schema);
  });

  const publish = async () => {
    const res = await api.request('POST', `/instances/${instanceId}/events`, {
      event: 'message',
      payload: messagePayload(),
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return { eventId: res.body.event_id as string, ackedAt: Date.now() };
  };

  test('an api process queues but never delivers; a worker started later delivers', async () => {
    const { eventId } = await publish();
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(receiver.received.length, 0, 'nothing sent without a worker');
    const listed = await api.request('GET', `/instances/${instanceId}/deliveries`);
    assert.deepEqual(
      listed.body.deliveries.map((d: any) => [d.event_id, d.status]),
      [[eventId, 'pending']],
    );
    children.push(await spawnHerald(dataDir, env, 60_000, ['--role', 'worker']));
    const [got] = await receiver.waitFor(1, 20_000);
    assert.equal(got.body.event_id, eventId);
  });

  test('a worker answers /healthz and /readyz, serves its /metrics to the admin key, and serves no API', async () => {
    const worker = children[1];
    assert.ok(worker, 'the worker of the previous test');
    assert.match(worker.output(), /role worker/);
    for (const [path, status] of [
      ['/healthz', 'ok'],
      ['/readyz', 'ready'],
    ]) {
      const res = await apiRequest(worker.url, 'GET', path, { key: null });
      assert.deepEqual([res.status, res.body.status], [200, status], path);
    }
    // The receiver has the request before the worker has its answer: the counter moves when the outcome is
    // decided, which is before the log says delivered.
    await eventually(
      async () => {
        const listed = await api.request('GET', `/instances/${instanceId}/deliveries`);
        return listed.body.deliveries[0]?.status === 'delivered' ? true : undefined;
      },
      10_000,
      'the delivery to be logged as delivered',
    );
    const metrics = await fetch(`${worker.url}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    assert.equal(metrics.status, 200);
    // The worker made the delivery of the previous test: its own counters show it.
    assert.match(await metrics.text(), /^herald_deliveries_total\{outcome="delivered"\} [1-9]/m);
    assert.equal((await apiRequest(worker.url, 'GET', '/metrics', { key: null })).status, 401);
    const res = await apiRequest(worker.url, 'GET', '/instances');
    assert.equal(res.status, 404);
  });

  test('a process whose SECRET_KEY differs from the others refuses to start', async () => {
    await assert.rejects(
      spawnHerald(dataDir, { ...env, SECRET_KEY: 'd'.repeat(64) }, 60_000, ['--role', 'worker']),
      /exited \(2\)[\s\S]*SECRET_KEY: is not the key the stored signing secrets are sealed with \(every process on one database/,
    );
  });

  test('an idle worker is woken by the publish (NOTIFY), not by its one-second poll', async (t) => {
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      // Idle long enough to be asleep, at a phase that varies against any poll.
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 400));
      const before = receiver.received.length;
      const { ackedAt } = await publish();
      const [got] = (await receiver.waitFor(before + 1, 10_000)).slice(before);
      latencies.push(got.at - ackedAt);
    }
    latencies.sort((a, b) => a - b);
    t.diagnostic(`publish → arrival: median ${latencies[5]} ms, max ${latencies[9]} ms`);
    // A 1 s poll alone would put each arrival anywhere up to 1 s later: all ten under 600 ms has odds of 0.6%.
    assert.ok(latencies[9] < 600, `latencies ${latencies.join(', ')} ms`);
  });
});
