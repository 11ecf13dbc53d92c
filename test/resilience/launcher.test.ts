/**
 * Herald never outlives what started it, however that goes: each way a supervisor, a terminal or a crash ends the
 * launcher, through the real entry points (`npm start`, `npx herald serve`, the launcher itself, the launcher as a
 * container's PID 1). Afterwards no process of that start is left (within a second) and a restart binds the same
 * port on the same data at once. docs/operations.md, "Running under a supervisor", has the table these check.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { V8_FLAGS } from '../../bin/v8-flags.js';
import { instanceWithWebhook } from '../support/child-rig.ts';
import { eventually, messagePayload } from '../support/herald.ts';
import { type ChildHerald, commandLine, type Entry, spawnHerald } from '../support/spawn.ts';

/** Runs `body` with a fresh DATA_DIR; whatever it leaves running is killed and the directory removed. */
async function withDataDir(body: (dataDir: string, started: ChildHerald[]) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-launcher-'));
  const started: ChildHerald[] = [];
  try {
    await body(dataDir, started);
  } finally {
    for (const h of started) await h.kill('SIGKILL', 'group').catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Whether `pid` runs: neither gone nor a zombie (this machine's PID 1 may not reap the orphans it inherits). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The server exits within a second (its environment, which the kill's check reads, goes a moment before it). */
async function goneWithinASecond(pid: number): Promise<void> {
  await eventually(async () => (alive(pid) ? undefined : true), 1000, `process ${pid} to end`);
}

/** A restart on the same port and data answers at once. */
async function restartsOnSamePort(dataDir: string, started: ChildHerald[], port: number): Promise<void> {
  const again = await spawnHerald(dataDir, { PORT: String(port) });
  started.push(again);
  assert.equal(again.port, port);
  assert.equal((await again.request('GET', '/instances')).status, 200);
}

for (const entry of ['npm start', 'npx herald'] as Entry[]) {
  test(`${entry}: SIGKILL of the process group leaves no Herald process, and a restart binds the same port`, async () => {
    await withDataDir(async (dataDir, started) => {
      const herald = await spawnHerald(dataDir, {}, 20_000, [], entry);
      started.push(herald);
      const { server } = herald.pids();
      const exit = await herald.kill('SIGKILL', 'group'); // throws if anything is left a second later
      assert.equal(exit.signal, 'SIGKILL');
      await goneWithinASecond(server);
      await restartsOnSamePort(dataDir, started, herald.port);
    });
  });

  test(`${entry}: SIGKILL of the PID that was started (npm's) leaves no Herald process within a second`, async () => {
    await withDataDir(async (dataDir, started) => {
      const herald = await spawnHerald(dataDir, {}, 20_000, [], entry);
      started.push(herald);
      await herald.kill('SIGKILL', 'pid');
      await restartsOnSamePort(dataDir, started, herald.port);
    });
  });
}

test('SIGKILL of the launcher alone (as the OOM killer would) leaves no Herald process within a second', async () => {
  await withDataDir(async (dataDir, started) => {
    const herald = await spawnHerald(dataDir, {}, 20_000, [], 'herald');
    started.push(herald);
    const { launcher, server } = herald.pids();
    assert.equal(launcher, herald.child.pid);
    process.kill(launcher, 'SIGKILL');
    await herald.kill('SIGKILL'); // already gone: waits for the exit, then for the server to be gone
    await goneWithinASecond(server);
    await restartsOnSamePort(dataDir, started, herald.port);
  });
});

test('the server runs with the V8 flags the launcher gives it', async () => {
  await withDataDir(async (dataDir, started) => {
    const herald = await spawnHerald(dataDir, {}, 20_000, [], 'npm start');
    started.push(herald);
    const line = commandLine(herald.pids().server);
    for (const flag of V8_FLAGS) assert.ok(line.includes(flag), `${flag} in ${line}`);
  });
});

/** A receiver that holds every request, so that a stop has an attempt in flight to wait for. */
async function holdingReceiver() {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => held.push(res));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    held,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Herald with one event's attempt in flight at a receiver that never answers. */
async function withAttemptInFlight(
  dataDir: string,
  entry: Entry,
  env: Record<string, string>,
  receiver: Awaited<ReturnType<typeof holdingReceiver>>,
): Promise<ChildHerald> {
  const herald = await spawnHerald(dataDir, env, 20_000, [], entry);
  const { instanceId } = await instanceWithWebhook(herald, receiver.url);
  const res = await herald.request('POST', `/instances/${instanceId}/events`, {
    event: 'message',
    payload: messagePayload(),
  });
  assert.equal(res.status, 202);
  await eventually(
    async () => (receiver.held.length === 1 ? true : undefined),
    10_000,
    'the attempt in flight',
  );
  return herald;
}

for (const entry of ['npm start', 'herald'] as Entry[]) {
  test(`${entry}: Ctrl-C (SIGINT to the terminal's group, which npm forwards again) is one graceful stop`, async () => {
    await withDataDir(async (dataDir, started) => {
      const herald = await spawnHerald(dataDir, {}, 20_000, [], entry);
      started.push(herald);
      const exit = await herald.kill('SIGINT', 'group');
      assert.equal(herald.output().match(/SIGINT received/g)?.length, 1, herald.output());
      assert.doesNotMatch(herald.output(), /received again/);
      // npm itself may end by the SIGINT it got (its own choice); the launcher reports Herald's exit 0.
      if (entry === 'herald') assert.deepEqual(exit, { code: 0, signal: null }, herald.output());
      else assert.ok(exit.code === 0 || exit.signal === 'SIGINT', JSON.stringify(exit));
      await restartsOnSamePort(dataDir, started, herald.port);
    });
  });
}

test('a second Ctrl-C during the stop stops at once, exit 1', async () => {
  const receiver = await holdingReceiver();
  try {
    await withDataDir(async (dataDir, started) => {
      const herald = await withAttemptInFlight(
        dataDir,
        'npm start',
        { DELIVERY_TIMEOUT_MS: '30000' },
        receiver,
      );
      started.push(herald);
      process.kill(-(herald.child.pid as number), 'SIGINT');
      await eventually(async () => (/SIGINT received/.test(herald.output()) ? true : undefined));
      await new Promise((r) => setTimeout(r, 300)); // a second key press, not the first one's echo through npm
      const exit = await herald.kill('SIGINT', 'group');
      assert.deepEqual(exit, { code: 1, signal: null }, herald.output());
      assert.match(herald.output(), /SIGINT received again; exiting at once/);
    });
  } finally {
    receiver.close();
  }
});

test('SIGHUP (the terminal closed) stops gracefully, exit 0', async () => {
  await withDataDir(async (dataDir, started) => {
    const herald = await spawnHerald(dataDir, {}, 20_000, [], 'herald');
    started.push(herald);
    const exit = await herald.kill('SIGHUP', 'group');
    assert.equal(exit.code, 0, herald.output());
    assert.match(herald.output(), /SIGHUP received; finishing in-flight attempts/);
  });
});

test("systemd's stop: SIGTERM to the main PID, SIGKILL of the group when the stop outlasts its timeout; the restart retries the cut attempt", async () => {
  const receiver = await holdingReceiver();
  try {
    await withDataDir(async (dataDir, started) => {
      const env = { DELIVERY_TIMEOUT_MS: '30000', RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2' };
      const herald = await withAttemptInFlight(dataDir, 'herald', env, receiver);
      started.push(herald);
      process.kill(herald.child.pid as number, 'SIGTERM');
      await eventually(async () => (/SIGTERM received/.test(herald.output()) ? true : undefined));
      await new Promise((r) => setTimeout(r, 500)); // TimeoutStopSec: the attempt is still held
      assert.equal(herald.child.exitCode, null, 'still finishing its attempt');
      const exit = await herald.kill('SIGKILL', 'group');
      assert.equal(exit.signal, 'SIGKILL');
      // On SQLite the lease dies with the process: the cut attempt is made again at once after the restart.
      if (!process.env.DATABASE_URL) {
        await restartsOnSamePort(dataDir, started, herald.port);
        await eventually(async () => (receiver.held.length === 2 ? true : undefined), 15_000, 'the retry');
      }
    });
  } finally {
    receiver.close();
  }
});

test('as PID 1 of a container: SIGTERM stops gracefully (exit 0), and a crash of the server is exit 137', async () => {
  await withDataDir(async (dataDir, started) => {
    const herald = await spawnHerald(dataDir, {}, 20_000, [], 'herald as PID 1');
    started.push(herald);
    // `docker stop` signals the container's PID 1 (unshare, like a container runtime, does not forward signals).
    // The kernel drops signals to a namespace's PID 1 that it has no handler for; the launcher has one.
    process.kill(herald.pids().launcher, 'SIGTERM');
    const exit = await herald.kill('SIGTERM');
    assert.deepEqual(exit, { code: 0, signal: null }, herald.output());
    assert.match(herald.output(), /SIGTERM received/);

    const again = await spawnHerald(dataDir, { PORT: String(herald.port) }, 20_000, [], 'herald as PID 1');
    started.push(again);
    process.kill(again.pids().server, 'SIGKILL');
    // A signal PID 1 sends itself is dropped too, so the launcher exits with the shell's 128 + 9 instead.
    assert.deepEqual(await again.exited, { code: 137, signal: null }, again.output());
    await again.kill('SIGKILL'); // nothing left
  });
});

test("a crash of the server is the launcher's exit status, for its supervisor to see", async () => {
  await withDataDir(async (dataDir, started) => {
    const herald = await spawnHerald(dataDir, {}, 20_000, [], 'herald');
    started.push(herald);
    process.kill(herald.pids().server, 'SIGKILL');
    assert.deepEqual(await herald.exited, { code: null, signal: 'SIGKILL' });
  });
});
