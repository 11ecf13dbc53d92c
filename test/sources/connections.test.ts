/**
 * One connection per broker address and process: two sources on two queues (or streams) of one broker share one
 * TCP connection of the Herald process, counted by the kernel (`ss`), and a third source at another address (the
 * same broker through a TCP proxy of the test's) has its own. Deleting the sources closes them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { eventually } from '../support/herald.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { BROKER_PORTS, KINDS, natsConsumerFirst, testQueue } from './rig.ts';

const run = promisify(execFile);

/** Established TCP connections from the given processes to 127.0.0.1:`port`, as the kernel lists them. */
async function connectionsTo(pids: number[], port: number): Promise<number> {
  const { stdout } = await run('ss', ['-Htnp', 'state', 'established', `( dport = :${port} )`]);
  return stdout
    .split('\n')
    .filter((line) => [...line.matchAll(/pid=(\d+)/g)].some((m) => pids.includes(Number(m[1])))).length;
}

for (const kind of KINDS) {
  test(`${kind}: the sources at one broker address share one connection of the process`, async () => {
    const queues = [await testQueue(kind), await testQueue(kind), await testQueue(kind)];
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: BROKER_PORTS[kind] });
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-src-conn-'));
    let herald: ChildHerald | null = null;
    try {
      if (kind === 'nats') for (const q of queues) await natsConsumerFirst(q);
      herald = await spawnHerald(dataDir);
      const h = herald;
      const made = await h.request('POST', '/instances', { name: 'connections' });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const instanceId = made.body.instance_id as string;
      const ids: string[] = [];
      for (const [i, q] of queues.entries()) {
        const s = await h.request('POST', '/sources', {
          url: q.url(i === 2 ? proxy.port : undefined),
          format: 'herald',
          instance_id: instanceId,
        });
        assert.equal(s.status, 201, JSON.stringify(s.body));
        ids.push(s.body.source.source_id);
      }
      await eventually(
        async () => {
          for (const id of ids)
            if ((await h.request('GET', `/sources/${id}`)).body.source.state !== 'consuming')
              return undefined;
          return true;
        },
        20_000,
        'all three consuming',
      );
      const pids = h.processes();
      assert.equal(await connectionsTo(pids, BROKER_PORTS[kind]), 1, 'one connection for the two sources');
      assert.equal(await connectionsTo(pids, proxy.port), 1, 'one for the other address');
      for (const id of ids) assert.equal((await h.request('DELETE', `/sources/${id}`)).status, 200);
      await eventually(
        async () =>
          (await connectionsTo(pids, BROKER_PORTS[kind])) + (await connectionsTo(pids, proxy.port)) === 0
            ? true
            : undefined,
        10_000,
        'closed with the last source',
      );
    } finally {
      await herald?.kill('SIGTERM');
      await proxy.close();
      for (const q of queues) await q.remove();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
