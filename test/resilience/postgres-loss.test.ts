/**
 * PostgreSQL going away under load, with Herald as real processes behind a TCP proxy of the test's own (the shared
 * server is never touched): every connection cut at random moments while single events and batches are published,
 * then connections refused for about 5 s. No process exits; ingest answers 503 with Retry-After while the database
 * is away, and /readyz 503; both recover within seconds of its return; every event answered 202 reaches the
 * receiver. Once with one process (`--role all`), once with an api and a worker process.
 * The cut moments and batch sizes come from a seeded random; set FAULT_SEED to replay a run.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { seededRandom } from '../../src/domain/random.ts';
import { instanceWithWebhook } from '../support/child-rig.ts';
import { eventually, messagePayload } from '../support/herald.ts';
import { DATABASE_URL, dropSchema, postgresSkip, queryStored, scratchSchema } from '../support/postgres.ts';
import { TestReceiver } from '../support/receiver.ts';
import { type ChildHerald, spawnHerald } from '../support/spawn.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

const CUTS = 15;
const REFUSED_MS = 5000;
/** "Within a few seconds" of the database's return: for the first 202, and for /readyz 200 on every process. */
const RECOVERY_MS = 5000;
/** Lease = timeout + 5 s: an attempt whose outcome could not be written is made again about 6 s later. */
const ENV = {
  DELIVERY_TIMEOUT_MS: '1000',
  RETRY_SCHEDULE: '0.2,0.2,0.2,0.2,0.2',
  SECRET_KEY: 'd'.repeat(64),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Publishing {
  acked: Set<string>;
  /** When each 202 came (ms since the epoch), in order. */
  ackTimes: number[];
  unavailable: number;
  /** Anything but a 202 or a well-formed 503: a 500, a refused connection to Herald, a 503 without Retry-After. */
  unexpected: string[];
  stop(): Promise<void>;
}

/** Publishes single events and batches from `workers` loops until stopped; records every answer. */
function publish(api: ChildHerald, instanceId: string, random: () => number, workers = 3): Publishing {
  const p: Publishing = {
    acked: new Set(),
    ackTimes: [],
    unavailable: 0,
    unexpected: [],
    stop: async () => {},
  };
  let running = true;
  const worker = async () => {
    while (running) {
      const batch = random() < 0.5;
      const events = Array.from({ length: batch ? 1 + Math.floor(random() * 10) : 1 }, () => ({
        event: 'message',
        event_id: `evt_${randomUUID().replaceAll('-', '')}`,
        payload: messagePayload(),
      }));
      const path = `/instances/${instanceId}/events${batch ? '/batch' : ''}`;
      try {
        const res = await api.request('POST', path, batch ? { events } : events[0]);
        if (res.status === 202) {
          for (const e of events) p.acked.add(e.event_id);
          p.ackTimes.push(Date.now());
        } else if (
          res.status === 503 &&
          res.headers.get('retry-after') &&
          /database is unavailable; retry/.test(res.body?.error?.message)
        ) {
          p.unavailable++;
          await sleep(50);
        } else {
          p.unexpected.push(`${res.status} ${JSON.stringify(res.body)}`);
        }
      } catch (err) {
        p.unexpected.push(String((err as Error).cause ?? err));
        await sleep(50);
      }
    }
  };
  const all = Promise.all(Array.from({ length: workers }, worker));
  p.stop = async () => {
    running = false;
    await all;
  };
  return p;
}

async function readyz(herald: ChildHerald): Promise<number> {
  return (await herald.request('GET', '/readyz')).status;
}

async function faultRun(t: test.TestContext, roles: ('all' | 'api' | 'worker')[]): Promise<void> {
  const seed = Number(process.env.FAULT_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (replay with FAULT_SEED=${seed})`);
  const cutDelay = seededRandom(seed);
  const shapes = seededRandom(seed + 1);
  const target = new URL(DATABASE_URL as string);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  const { schema, url } = await scratchSchema();
  const proxied = new URL(url);
  proxied.host = `127.0.0.1:${proxy.port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-pgloss-'));
  const receiver = await TestReceiver.start();
  const delivered = new Set<string>();
  receiver.answer = (req) => {
    delivered.add(req.body?.event_id);
    return { status: 200 };
  };
  const heralds: ChildHerald[] = [];
  let publishing: Publishing | null = null;
  try {
    for (const role of roles) {
      const args = role === 'all' ? [] : ['--role', role];
      heralds.push(await spawnHerald(dataDir, { ...ENV, DATABASE_URL: proxied.toString() }, 30_000, args));
    }
    const exits: string[] = [];
    for (const [i, h] of heralds.entries()) {
      void h.exited.then((e) => exits.push(`${roles[i]} exited (${e.code ?? e.signal}):\n${h.output()}`));
    }
    const api = heralds[0];
    const { instanceId } = await instanceWithWebhook(api, receiver.url);
    publishing = publish(api, instanceId, shapes);

    // Cuts at random moments, each dropping every connection of every process.
    let cut = 0;
    let dropped = 0;
    while (cut < CUTS) {
      await sleep(150 + Math.floor(cutDelay() * 850));
      dropped += proxy.cut();
      cut++;
      assert.deepEqual(exits, [], `after cut ${cut}`);
    }
    t.diagnostic(
      `${cut} cuts (${dropped} connections dropped); ${publishing.acked.size} events acknowledged`,
    );

    // Refused for about 5 s: /readyz turns 503 on every process, ingest answers 503 with Retry-After.
    const before = publishing.unavailable;
    await proxy.refuse();
    const refusedAt = Date.now();
    for (const h of heralds) {
      await eventually(async () => ((await readyz(h)) === 503 ? true : undefined), REFUSED_MS, '/readyz 503');
    }
    await eventually(
      async () => (publishing && publishing.unavailable > before ? true : undefined),
      REFUSED_MS,
      'ingest answers 503 while the database refuses connections',
    );
    await sleep(Math.max(0, refusedAt + REFUSED_MS - Date.now()));
    assert.deepEqual(exits, [], 'while refused');

    // Back: the first 202 and /readyz 200 on every process within a few seconds.
    await proxy.accept();
    const back = Date.now();
    const acks = publishing.ackTimes;
    const firstAck = await eventually(
      async () => acks.find((at) => at >= back),
      RECOVERY_MS,
      `a 202 within ${RECOVERY_MS} ms of the database's return`,
    );
    let readyAt = 0;
    for (const [i, h] of heralds.entries()) {
      const answers: string[] = [];
      await eventually(
        async () => {
          const asked = Date.now();
          const status = await readyz(h);
          answers.push(`${status} at ${asked - back} ms, in ${Date.now() - asked} ms`);
          return status === 200 ? true : undefined;
        },
        RECOVERY_MS,
        `/readyz 200 on ${roles[i]}`,
      ).catch((err) => {
        throw new Error(`${roles[i]} not ready: ${answers.join('; ')}\n${h.output().slice(-20_000)}`, {
          cause: err,
        });
      });
      readyAt = Date.now();
    }
    t.diagnostic(
      `database back: first 202 after ${firstAck - back} ms, /readyz 200 on every process after ${readyAt - back} ms; ` +
        `${publishing.unavailable} answers 503 in all`,
    );
    await sleep(500);
    await publishing.stop();
    const logs = () => heralds.map((h, i) => `--- ${roles[i]}:\n${h.output().slice(-20_000)}`).join('\n');
    assert.deepEqual(
      publishing.unexpected,
      [],
      `every answer was a 202 or a 503 with Retry-After\n${logs()}`,
    );

    // Nothing acknowledged is lost.
    const acked = publishing.acked;
    await eventually(
      async () => ([...acked].every((id) => delivered.has(id)) ? true : undefined),
      30_000,
      `every acknowledged event at the receiver (seed ${seed})`,
    ).catch(async (err) => {
      const missing = [...acked].filter((id) => !delivered.has(id));
      const rows = await queryStored(
        schema,
        `SELECT d.status, d.next_attempt_at, d.lease_token IS NOT NULL AS leased, d.attempt_count, count(*) AS n FROM deliveries d
         WHERE d.event_id = ANY(string_to_array(?, ',')) GROUP BY 1, 2, 3, 4`,
        [missing.join(',')],
      );
      throw new Error(`${missing.length} missing: ${JSON.stringify(rows)}\n${logs()}`, { cause: err });
    });
    t.diagnostic(`${acked.size} events acknowledged, ${delivered.size} received (seed ${seed})`);
    assert.deepEqual(exits, [], 'no process exited');
    for (const h of heralds) assert.deepEqual(await h.kill('SIGTERM'), { code: 0, signal: null }, h.output());
  } finally {
    // Killed first: a request to a Herald that hangs would hold the publishers for ever.
    await Promise.all(heralds.map((h) => h.kill('SIGKILL')));
    await publishing?.stop();
    await receiver.close();
    await proxy.close();
    rmSync(dataDir, { recursive: true, force: true });
    await dropSchema(schema);
  }
}

test(
  'PostgreSQL cut 15 times and refused for 5 s: Herald (--role all) stays up, answers 503, loses nothing',
  { skip: postgresSkip },
  (t) => faultRun(t, ['all']),
);

test(
  'PostgreSQL cut 15 times and refused for 5 s: an api and a worker process stay up, answer 503, lose nothing',
  { skip: postgresSkip },
  (t) => faultRun(t, ['api', 'worker']),
);
