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

type Pool = Sql<Record<string, never>>;

export class PostgresDatabase {
  readonly sql: Pool;
  /**
   * Connections whose commits return before their WAL reaches the disk: for recorded outcomes, whose loss in a
   * database crash only means an attempt made again once the lease runs out (at least once). Never for ingest,
   * whose 202 promises the event is stored, nor for claims, whose lease must survive a crash of the database
   * while the attempt is in flight. Opened on first use, so an API process never opens one.
   */
  readonly #relaxed: Pool;
  /** NOTIFY channel of this schema, so that two Heralds in two schemas of one database do not wake each other. */
  readonly channel: string;

  private constructor(sql: Pool, relaxed: Pool, channel: string) {
    this.sql = sql;
    this.#relaxed = relaxed;
    this.channel = channel;
  }

  static async open(url: string): Promise<PostgresDatabase> {
    const pool = (max: number, connection: Record<string, string>) =>
      postgres(url, {
        max,
        types: { bigint: BIGINT_AS_NUMBER },
        onnotice: () => {},
        // Idle connections go back to the server; a quiet process holds none.
        idle_timeout: 30,
        connection: {
          application_name: 'herald',
          ...connection,
          ...(process.env.HERALD_EXPLAIN
            ? {
                session_preload_libraries: 'auto_explain',
                'auto_explain.log_min_duration': '8',
                'auto_explain.log_analyze': 'on',
                'auto_explain.log_nested_statements': 'on',
              }
            : {}),
        },
      }) as unknown as Pool;
    const sql = pool(10, {});
    try {
      await migrate(sql);
      const [{ schema }] = await sql<{ schema: string }[]>`SELECT current_schema() AS schema`;
      return new PostgresDatabase(sql, pool(2, { synchronous_commit: 'off' }), `herald_work.${schema}`);
    } catch (err) {
      await sql.end({ timeout: 1 });
      throw err;
    }
  }

  /** Runs `fn` in a transaction; `durable: false` on the relaxed connections (see above). */
  async tx<T>(fn: (sql: Tx) => Promise<T>, { durable = true } = {}): Promise<T> {
    const pool = durable ? this.sql : this.#relaxed;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await pool.begin((sql) => fn(sql as Tx))) as T;
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
    await Promise.all([this.sql.end({ timeout: 5 }), this.#relaxed.end({ timeout: 5 })]);
  }
}
