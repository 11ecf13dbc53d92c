/**
 * PostgreSQL for tests: DATABASE_URL (CI sets it) and one scratch schema per Herald under test, so that test files
 * running in parallel never see each other's rows. A schema is dropped when its test closes it, and any left over
 * (a test that failed half-way) when the test process exits.
 */
import { createHash } from 'node:crypto';
import postgres from 'postgres';

export const DATABASE_URL = process.env.DATABASE_URL?.trim() || null;

/** For `test(name, { skip: postgresSkip }, …)`: the reason, printed by the runner, or false. */
export const postgresSkip: string | false = DATABASE_URL
  ? false
  : 'PostgreSQL tests skipped: DATABASE_URL is unset';

/** True in the second pass of `npm test`, which runs the integration tests on PostgreSQL. */
export const onPostgres = process.env.HERALD_TEST_STORE === 'postgres';

const created = new Set<string>();

async function admin<T>(use: (sql: postgres.Sql) => Promise<T>, url = DATABASE_URL): Promise<T> {
  if (!url) throw new Error('DATABASE_URL is unset');
  const sql = postgres(url, {
    max: 1,
    onnotice: () => {},
    types: { bigint: { to: 20, from: [20], serialize: String, parse: Number } },
  });
  try {
    return await use(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** DATABASE_URL pointed at `schema` (the adapter works in the connection's search_path). */
export function schemaUrl(schema: string): string {
  const url = new URL(DATABASE_URL as string);
  url.searchParams.set('search_path', schema);
  return url.toString();
}

/** A schema name derived from `key` (a data directory, say), so that a restarted Herald finds the same one. */
export function schemaFor(key: string): string {
  return `herald_t_${createHash('sha256').update(key).digest('hex').slice(0, 20)}`;
}

/** Creates the schema when it does not exist yet; returns the URL that selects it. */
export async function ensureSchema(schema: string): Promise<string> {
  await admin((sql) => sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`);
  created.add(schema);
  return schemaUrl(schema);
}

export async function dropSchema(schema: string): Promise<void> {
  await admin((sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`);
  created.delete(schema);
}

/** A fresh schema of its own. */
export async function scratchSchema(): Promise<{ schema: string; url: string }> {
  const schema = schemaFor(`${process.pid}-${Math.random()}`);
  return { schema, url: await ensureSchema(schema) };
}

let sweeping = false;
process.on('beforeExit', () => {
  if (sweeping || created.size === 0) return;
  sweeping = true;
  void Promise.all([...created].map(dropSchema)).catch(() => {});
});

/** Rows of a query with `?` placeholders (as SQLite writes them) in `schema`, for tests that look at what is stored. */
export async function queryStored(
  schema: string,
  text: string,
  params: string[],
): Promise<Record<string, unknown>[]> {
  let n = 0;
  return admin(
    (sql) =>
      sql.unsafe(
        text.replaceAll('?', () => `$${++n}`),
        params,
      ),
    schemaUrl(schema),
  );
}

/** Every value of every row of every table of `schema`, as text. */
export async function storedValues(schema: string): Promise<string[]> {
  return admin(async (sql) => {
    const tables = await sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ${schema}`;
    const values: string[] = [];
    for (const { name } of tables) {
      for (const row of await sql`SELECT * FROM ${sql(schema)}.${sql(name)}`)
        values.push(...Object.values(row).map(String));
    }
    return values;
  });
}
