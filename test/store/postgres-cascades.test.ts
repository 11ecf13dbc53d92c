/**
 * On PostgreSQL, deliveries and attempts have no foreign keys (each row's check cost a tenth of the database's
 * time per delivery): triggers delete them with their webhook, event or delivery. Whatever deletes a parent, no
 * delivery or attempt may outlive it, even when an outcome is being recorded at that very moment.
 */

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import { route } from '../../src/domain/routing.ts';
import { openPostgresStore } from '../../src/store/open/postgres.ts';
import type { Store } from '../../src/store/ports.ts';
import { eventually } from '../support/herald.ts';
import { dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { LEASE, records, T0, unlimited } from './records.ts';

const delivered = { kind: 'delivered' } as const;

/** Rows whose parent is gone: deliveries without their webhook or event, attempts without their delivery. */
const ORPHANS = `
  SELECT (SELECT count(*) FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.webhook_id = d.webhook_id))
       + (SELECT count(*) FROM deliveries d WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = d.event_id))
       + (SELECT count(*) FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.delivery_id = a.delivery_id))
    AS orphans`;

describe('postgres: deliveries and attempts go with what they belong to', { skip: postgresSkip }, () => {
  let store: Store;
  let sql: postgres.Sql;
  const { instance, webhook, draft, result } = records(() => store);
  const count = async (text: string) => Number((await sql.unsafe(text))[0].n);
  const orphans = async () => Number((await sql.unsafe(ORPHANS))[0].orphans);

  const open = async () => {
    const { schema, url } = await scratchSchema();
    store = await openPostgresStore(url);
    sql = postgres(url, { max: 2, onnotice: () => {} });
    after(async () => {
      await store.close();
      await sql.end();
      await dropSchema(schema);
    });
  };

  /** An instance with two webhooks and two events, each delivery attempted once (a 200), so every table has rows. */
  async function attempted() {
    const ins = await instance();
    const [a, b] = [await webhook(ins), await webhook(ins)];
    await store.events.ingest(ins, [draft(ins), draft(ins)], route, T0);
    const claims = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
      (c) => c.instance_id === ins,
    );
    assert.equal(claims.length, 4);
    await store.outcomes.recordAttempts(
      claims.map((c) => result(c, 200, delivered, T0)),
      T0,
    );
    return { ins, a, b, claims };
  }

  test('deleting a webhook deletes its deliveries and their attempts, and nothing of the other', async () => {
    await open();
    const { ins, a } = await attempted();
    assert.equal(await count('SELECT count(*) AS n FROM attempts'), 4);
    assert.equal(await store.webhooks.deleteWebhook(ins, a.webhook_id), true);
    assert.equal(await count('SELECT count(*) AS n FROM deliveries'), 2);
    assert.equal(await count('SELECT count(*) AS n FROM attempts'), 2);
    assert.equal(await orphans(), 0);
  });

  test('deleting an instance deletes every delivery and attempt of it, and nothing of another', async () => {
    await open();
    const gone = await attempted();
    await attempted();
    assert.equal(await store.catalog.deleteInstance(gone.ins), true);
    assert.equal(await count('SELECT count(*) AS n FROM deliveries'), 4);
    assert.equal(await count('SELECT count(*) AS n FROM attempts'), 4);
    assert.equal(await orphans(), 0);
  });

  test('an event deleted directly takes its deliveries and their attempts with it', async () => {
    await open();
    const { claims } = await attempted();
    await sql`DELETE FROM events WHERE event_id = ${claims[0].event_id}`;
    assert.equal(await count('SELECT count(*) AS n FROM deliveries'), 2);
    assert.equal(await count('SELECT count(*) AS n FROM attempts'), 2);
    assert.equal(await orphans(), 0);
  });

  test('retention deletes finished deliveries with their attempts', async () => {
    await open();
    await attempted();
    assert.deepEqual(await store.retention.purgeFinished(T0 + 1, 100), { deliveries: 4, events: 2 });
    assert.equal(await count('SELECT count(*) AS n FROM attempts'), 0);
    assert.equal(await orphans(), 0);
  });

  test('a webhook deleted while an outcome of its delivery is being recorded is deleted, and the outcome too', async () => {
    await open();
    const { ins, a, claims } = await attempted();
    const [held] = claims.filter((c) => c.webhook_id === a.webhook_id);
    // Held as the outcome writer holds it: the delivery updated, then the webhook checked for its hourly counts
    // (the foreign key's FOR KEY SHARE), the second step taken only once the delete is waiting.
    const recording = await sql.reserve();
    try {
      const [{ pid }] = await recording`SELECT pg_backend_pid() AS pid`;
      await recording`BEGIN`;
      await recording`UPDATE deliveries SET status = status WHERE delivery_id = ${held.delivery_id}`;
      // Settled at once, so that a delete failed while the test still holds its side is reported, not unhandled.
      const deleting = store.webhooks.deleteWebhook(ins, a.webhook_id).then(
        (deleted) => ({ deleted }),
        (err: Error) => ({ failed: err.message }),
      );
      await eventually(
        async () => {
          const [{ waiting }] = await sql`
            SELECT count(*)::integer AS waiting FROM pg_stat_activity
            WHERE ${pid}::integer = ANY(pg_blocking_pids(pid))`;
          return waiting === 1 || undefined;
        },
        5000,
        'the delete to wait for the delivery being recorded',
      );
      await recording`SELECT 1 FROM webhooks WHERE webhook_id = ${a.webhook_id} FOR KEY SHARE`;
      await recording`COMMIT`;
      assert.deepEqual(await deleting, { deleted: true });
    } finally {
      recording.release();
    }
    assert.equal(await count('SELECT count(*) AS n FROM deliveries'), 2);
    assert.equal(await orphans(), 0);
  });

  test('an outcome recorded while its webhook is being deleted logs nothing, and fails nothing', async () => {
    await open();
    const ins = await instance();
    const [gone, kept] = [await webhook(ins), await webhook(ins)];
    await store.events.ingest(ins, [draft(ins)], route, T0);
    const claims = (await store.claims.claimDue(T0, 100, LEASE, unlimited)).filter(
      (c) => c.instance_id === ins,
    );
    assert.equal(claims.length, 2);
    // The deletion holds the webhook's delivery until it commits; the outcome meanwhile waits for that row.
    const deleting = await sql.reserve();
    try {
      const [{ pid }] = await deleting`SELECT pg_backend_pid() AS pid`;
      await deleting`BEGIN`;
      await deleting`DELETE FROM webhooks WHERE webhook_id = ${gone.webhook_id}`;
      const recording = store.outcomes.recordAttempts(
        claims.map((c) => result(c, 200, delivered, T0)),
        T0,
      );
      await eventually(
        async () => {
          const [{ waiting }] = await sql`
            SELECT count(*)::integer AS waiting FROM pg_stat_activity
            WHERE ${pid}::integer = ANY(pg_blocking_pids(pid)) AND query LIKE '%jsonb_to_recordset%'`;
          return waiting === 1 || undefined;
        },
        5000,
        'the outcome to wait for the delivery being deleted',
      );
      await deleting`COMMIT`;
      await recording;
    } finally {
      deleting.release();
    }
    assert.equal(await orphans(), 0);
    const rows = await sql`SELECT d.webhook_id, d.status, count(a.*)::integer AS attempts FROM deliveries d
                           LEFT JOIN attempts a USING (delivery_id) GROUP BY d.delivery_id`;
    assert.deepEqual(
      rows.map((r) => [r.webhook_id, r.status, r.attempts]),
      [[kept.webhook_id, 'delivered', 1]],
    );
  });
});
