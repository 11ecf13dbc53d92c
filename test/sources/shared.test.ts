/**
 * Several Herald processes on one PostgreSQL consume one source together: each runs a consumer of it, each message is
 * stored once, the counters in the API are both processes' together, and a source deleted through one process is
 * let go by the other.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { eventually, startTestHerald } from '../support/herald.ts';
import { dropSchema, ensureSchema, onPostgres, schemaFor } from '../support/postgres.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';
import { messageBody } from './messages.ts';
import { KINDS, natsConsumerFirst, testQueue } from './rig.ts';

const N = 600;
const PREFETCH = 20;

for (const kind of KINDS) {
  test(`${kind}: two processes on one PostgreSQL share a source`, {
    skip: onPostgres
      ? false
      : 'several processes share a database on PostgreSQL (HERALD_TEST_STORE=postgres)',
  }, async () => {
    const key = `shared-${randomBytes(4).toString('hex')}`;
    // Both processes reach the database through a proxy of the test's, so that it can hold their stores back.
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
    const url = new URL(await ensureSchema(schemaFor(key)));
    url.port = String(proxy.port);
    // Every process on one database uses one secret key.
    const env = {
      DATABASE_URL: url.toString(),
      SOURCE_PREFETCH: String(PREFETCH),
      SECRET_KEY: randomBytes(32).toString('hex'),
    };
    const q = await testQueue(kind);
    const a = await startTestHerald(env, { dataDir: mkdtempSync(join(tmpdir(), 'herald-shared-')) });
    let b: typeof a | null = null;
    try {
      b = await startTestHerald(env, { dataDir: mkdtempSync(join(tmpdir(), 'herald-shared-')) });
      const other = b;
      if (kind === 'nats') await natsConsumerFirst(q);
      const instanceId = await a.createInstance('shared');
      const made = await a.request('POST', '/sources', {
        body: { url: q.url(), format: 'herald', instance_id: instanceId },
      });
      const id = made.body.source.source_id;
      // Both consume before the messages come, so that both take a share.
      const metric = async (h: typeof a) => {
        const text = (await h.request('GET', '/metrics')).body as string;
        return Number(new RegExp(`herald_source_up\\{source_id="${id}"\\} (\\d)`).exec(text)?.[1] ?? 0);
      };
      await eventually(
        async () => ((await metric(a)) && (await metric(other)) ? true : undefined),
        15_000,
        'both consume',
      );
      // Held back on purpose: with the store away neither process can store what it takes, so each fills its own
      // prefetch and holds it; whichever polls faster cannot take it all.
      await proxy.refuse();
      proxy.cut();
      const run = randomBytes(4).toString('hex');
      for (let n = 0; n < N; n++) await q.publish(messageBody('herald', n, run), `${run}-${n}`);
      await eventually(
        async () => ((await q.waiting()) === N - 2 * PREFETCH ? true : undefined),
        30_000,
        'each process holding its prefetch',
      );
      await proxy.accept();
      const ingested = async (h: typeof a) => {
        const text = (await h.request('GET', '/metrics')).body as string;
        return Number(
          new RegExp(`herald_source_messages_total\\{source_id="${id}",result="ingested"\\} (\\d+)`).exec(
            text,
          )?.[1] ?? 0,
        );
      };
      await eventually(
        async () => ((await ingested(a)) + (await ingested(other)) === N ? true : undefined),
        60_000,
        `${N} ingested`,
      );
      assert.ok((await ingested(a)) > 0 && (await ingested(other)) > 0, 'each process took a share');
      // The API's counters are the store's: both processes' together, the same whichever is asked.
      await eventually(
        async () => {
          const s = (await other.request('GET', `/sources/${id}`)).body.source;
          return s.ingested === N && s.received === N ? true : undefined;
        },
        15_000,
        'counters summed',
      );
      assert.equal((await a.request('DELETE', `/sources/${id}`)).status, 200);
      await eventually(
        async () =>
          (await metric(other)) === 0 &&
          !(await other.request('GET', '/metrics')).body.includes(`source_id="${id}"`)
            ? true
            : undefined,
        15_000,
        'let go by the other',
      );
    } finally {
      await a.close();
      await b?.close();
      await q.remove();
      await proxy.accept().catch(() => {}); // already accepting, unless the test failed while it refused
      await dropSchema(schemaFor(key));
      await proxy.close();
    }
  });
}
