/**
 * Herald's connections to PostgreSQL (src/store/postgres/connection.ts) against the driver's faults when a connection
 * is cut, through a TCP proxy in front of the real server: the next query's answer is whole, a query never waits
 * for ever, and a connection cut with a write pending reconnects (the driver's patch, patches/); and in a burst,
 * a transaction begun on a connection whose pipeline is full is the transaction's (the same patch).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connect } from '../../src/store/postgres/connection.ts';
import { eventually } from '../support/herald.ts';
import { DATABASE_URL, dropSchema, postgresSkip, scratchSchema } from '../support/postgres.ts';
import { TcpProxy } from '../support/tcp-proxy.ts';

/** How many sessions the server is running `query` in (asked without the proxy). */
async function running(query = 'SELECT pg_sleep(10)'): Promise<number> {
  const direct = connect(DATABASE_URL as string, { max: 1 });
  try {
    const [row] = await direct<{ n: number }[]>`
      SELECT count(*)::integer AS n FROM pg_stat_activity WHERE state = 'active' AND query = ${query}`;
    return row.n;
  } finally {
    await direct.end({ timeout: 1 });
  }
}

/** Rows of about 110 bytes: the first 2,000 are sent (well over the server's 8 KiB output buffer), then it waits. */
const HALTING =
  "SELECT g, repeat('x', 100) AS pad, pg_sleep(CASE WHEN g = 2000 THEN 10 ELSE 0 END) FROM generate_series(1, 4000) g";

/** A pool of `max` connections to the test database through a TCP proxy of the test's own. */
async function throughProxy(max: number) {
  const target = new URL(DATABASE_URL as string);
  const proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
  const url = new URL(DATABASE_URL as string);
  url.host = `127.0.0.1:${proxy.port}`;
  return { proxy, sql: connect(url.toString(), { max }) };
}

test('a connection cut while rows arrive: the next query on it answers its own rows, whole', {
  skip: postgresSkip,
}, async () => {
  const { proxy, sql } = await throughProxy(1);
  try {
    const big = sql.unsafe(HALTING).then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    // Cut once the server has sent rows and waits in the middle of the result (it timed a sleep before, and a fast
    // moment could finish the whole result first: the next query then went out on the connection being cut).
    await eventually(
      async () => ((await running(HALTING)) > 0 ? true : undefined),
      5000,
      'rows sent, the rest held',
    );
    proxy.cut();
    assert.equal(await big, 'ECONNRESET', 'the cut query failed with the cut');
    const rows = await Promise.race([
      sql<{ x: number }[]>`SELECT 1 AS x`,
      new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 10_000)),
    ]);
    assert.notEqual(rows, 'waiting', 'the next query is answered');
    const answer = rows as { x: number }[];
    assert.deepEqual({ length: answer.length, first: answer[0] }, { length: 1, first: { x: 1 } });
  } finally {
    await sql.end({ timeout: 1 });
    await proxy.close();
  }
});

test('arrays of every type the store sends reach PostgreSQL whole (without the driver fetching types)', {
  skip: postgresSkip,
}, async () => {
  const sql = connect(DATABASE_URL as string, { max: 1 });
  try {
    const [row] = await sql<{ t: string; i: string; b: string; d: string }[]>`
      SELECT array_to_string(${['a"b', 'c\\d', 'e,f']}::text[], '|') AS t,
             array_to_string(${[1, 2]}::integer[], '|') AS i,
             array_to_string(${[1_795_594_200_888, 3]}::bigint[], '|') AS b,
             array_to_string(${[1.5, 1_795_594_200_888.25]}::double precision[], '|') AS d`;
    assert.deepEqual(row, { t: 'a"b|c\\d|e,f', i: '1|2', b: '1795594200888|3', d: '1.5|1795594200888.25' });
  } finally {
    await sql.end({ timeout: 1 });
  }
});

test('a query written in the moment its connection is cut does not leave that connection unable to reconnect', {
  skip: postgresSkip,
}, async () => {
  const { proxy, sql } = await throughProxy(2);
  try {
    // Two open connections; the long query goes to the second one through the proxy, whose cut this process reads
    // first (with the other order the question goes to a fresh connection and nothing can go wrong).
    await Promise.all([sql`SELECT pg_sleep(0.2)`, sql`SELECT pg_sleep(0.05)`]);
    // When the busy one's query fails, the caller asks again at once, as Herald's loops do: the pool hands the
    // question to the idle connection, whose own cut it has not read yet.
    const retried = sql`SELECT pg_sleep(10)`.catch(() => sql`SELECT 1`.catch(() => 'failed'));
    // The cut comes once the server runs the long query: the connection waits for its answer, the other is idle.
    await eventually(async () => ((await running()) > 0 ? true : undefined), 5000, 'the long query to run');
    proxy.cut();
    await retried;
    // The database is there: every connection of the pool answers (a poisoned one times out after 5 s instead).
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        sql<{ x: number }[]>`SELECT 1 AS x`.then(
          ([row]) => row.x,
          (err: { code?: string }) => err.code,
        ),
      ),
    );
    assert.deepEqual(answers, [1, 1, 1, 1]);
  } finally {
    await sql.end({ timeout: 1 });
    await proxy.close();
  }
});

test("a transaction begun as the query that fills a busy connection's pipeline commits, and the writes after it are kept", {
  skip: postgresSkip,
}, async () => {
  const { schema, url } = await scratchSchema();
  const sql = connect(url, { max: 3 });
  try {
    await sql`CREATE TABLE writes (n integer)`;
    // Every connection open and the query prepared on each, so that queries pipeline instead of waiting.
    for (let k = 0; k < 3; k++)
      await Promise.all(Array.from({ length: 9 }, (_, i) => sql`SELECT ${i}::integer`));
    const begun: string[] = [];
    // The driver pipes up to 100 queries in flight per connection; 300 to 303 before the transaction, handed out in
    // turn to the three connections, make its BEGIN the one that fills a pipeline, or the one after.
    for (const before of [300, 301, 302, 303]) {
      const burst = Array.from({ length: before }, (_, i) =>
        sql`SELECT ${i}::integer, pg_sleep(0.0005)`.execute(),
      );
      // The burst's queries are handed to connections a turn after they are made: the BEGIN goes after them.
      await new Promise((resolve) => process.nextTick(resolve));
      await new Promise((resolve) => process.nextTick(resolve));
      begun.push(
        await sql
          .begin(async (tx) => {
            await tx`INSERT INTO writes VALUES (0)`;
            return 'committed';
          })
          .catch((err: { code?: string }) => err.code ?? String(err)),
      );
      await Promise.all(burst);
    }
    assert.deepEqual(begun, ['committed', 'committed', 'committed', 'committed']);
    // Plain writes on every connection of the pool: none may land inside a transaction left open on one of them.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => sql`INSERT INTO writes VALUES (${i + 1}::integer)`),
    );
    await sql.end({ timeout: 1 });
    const other = connect(url, { max: 1 });
    try {
      const [{ n }] = await other<{ n: number }[]>`SELECT count(*)::integer AS n FROM writes`;
      assert.equal(n, 34, 'every write committed, seen once the pool has closed');
    } finally {
      await other.end({ timeout: 1 });
    }
  } finally {
    await sql.end({ timeout: 1 });
    await dropSchema(schema);
  }
});
