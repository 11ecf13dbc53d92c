/**
 * The PostgreSQL connection: a pool shared by the store's parts, epoch-millisecond bigints read as numbers,
 * transactions retried when PostgreSQL picks them as a deadlock victim, and the work channel (LISTEN/NOTIFY).
 * The schema is the connection's search_path (e.g. `?search_path=herald` in DATABASE_URL), `public` by default.
 */
import postgres, { type Sql, type TransactionSql } from 'postgres';
import { migrate } from './migrations.ts';

export type Tx = TransactionSql<Record<string, never>>;

/** Times are epoch milliseconds in bigint columns: well inside Number.MAX_SAFE_INTEGER, so read as numbers. */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => Number(x),
};

/** deadlock_detected, serialization_failure: the transaction was rolled back whole and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 3;

export class PostgresDatabase {
  readonly sql: Sql<Record<string, never>>;
  /** NOTIFY channel of this schema, so that two Heralds in two schemas of one database do not wake each other. */
  readonly channel: string;

  private constructor(sql: Sql<Record<string, never>>, channel: string) {
    this.sql = sql;
    this.channel = channel;
  }

  static async open(url: string): Promise<PostgresDatabase> {
    const sql = postgres(url, {
      types: { bigint: BIGINT_AS_NUMBER },
      onnotice: () => {},
      // Idle connections go back to the server; a quiet API process holds none.
      idle_timeout: 30,
      connection: { application_name: 'herald' },
    }) as unknown as Sql<Record<string, never>>;
    try {
      await migrate(sql);
      const [{ schema }] = await sql<{ schema: string }[]>`SELECT current_schema() AS schema`;
      return new PostgresDatabase(sql, `herald_work.${schema}`);
    } catch (err) {
      await sql.end({ timeout: 1 });
      throw err;
    }
  }

  /**
   * Runs `fn` in a transaction. `durable: false` lets the commit return before its WAL reaches the disk: for
   * claims and outcomes, whose loss in a database crash only means an attempt made again (at least once);
   * never for ingest, whose 202 promises the event is stored.
   */
  async tx<T>(fn: (sql: Tx) => Promise<T>, { durable = true } = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.sql.begin(async (sql) => {
          // Not awaited alone: pipelined with the first statement of `fn`.
          const relaxed = durable ? null : sql`SET LOCAL synchronous_commit = off`;
          const result = await fn(sql as Tx);
          await relaxed;
          return result;
        })) as T;
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= MAX_TRIES || !code || !RETRYABLE.has(code)) throw err;
      }
    }
  }

  /** Sent when the transaction commits, so a woken worker finds the work already visible. */
  async notifyWork(sql: Tx): Promise<void> {
    await sql`SELECT pg_notify(${this.channel}, '')`;
  }

  /**
   * Calls `wake` on every notification of the channel, and again after each (re)connection of the listening
   * connection, since notifications sent while it was down are lost.
   */
  async listen(wake: () => void): Promise<void> {
    await this.sql.listen(this.channel, () => wake(), wake);
  }

  async close(): Promise<void> {
    await this.sql.end({ timeout: 5 });
  }
}
