/**
 * The PostgreSQL database: a pool shared by the store's parts (connection.ts), transactions retried when
 * PostgreSQL picks them as a deadlock victim and never left to the driver after a lost connection, and the work
 * channel (LISTEN/NOTIFY, listener.ts).
 */
import type { TransactionSql } from 'postgres';
import { LeaseTokens } from '../../domain/ids.ts';
import type { Work } from '../records.ts';
import { CONNECTION_CODES, connect, type Pool, wholeRows } from './connection.ts';
import { OVERFLOW, WorkListener } from './listener.ts';
import { migrate } from './migrations.ts';

export type Tx = TransactionSql<Record<string, never>>;

/**
 * The driver answers a transaction whose body failed with a ROLLBACK on the same connection, even when the
 * failure was that connection closing: the ROLLBACK is then written to a socket already gone, and the driver
 * throws from a timer where nobody can catch it (porsager/postgres#1066, #1154, #1208; unfixed in 3.4.9). A body
 * that failed because its connection was lost never settles instead: the driver's begin() rejects by itself when
 * the connection closes, and the ROLLBACK, pointless on a closed connection, is never sent.
 */
function untilConnectionLoss<T>(body: Promise<T>): Promise<T> {
  return body.catch((err: unknown) => {
    if (CONNECTION_CODES.has((err as { code?: string })?.code ?? '') || isServerShutdown(err))
      return new Promise<never>(() => {});
    throw err;
  });
}

/** admin_shutdown, crash_shutdown: the server closes the connection right after. */
const isServerShutdown = (err: unknown) => /^57P0[12]$/.test((err as { code?: string })?.code ?? '');

/** deadlock_detected, serialization_failure: the transaction was rolled back whole and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 3;

export class PostgresDatabase {
  readonly sql: Pool;
  /**
   * Connections whose commits return before their WAL reaches the disk: for recorded outcomes, whose loss in a
   * database crash only means an attempt made again once the lease runs out (at least once). Never for ingest,
   * whose 202 promises the event is stored, nor for claims, whose lease must survive a crash of the database
   * while the attempt is in flight. Opened on first use, so an API process never opens one. Planned without
   * sequential scans: an outcome reads deliveries and attempts by key only, and a plan the driver prepared while the
   * table was small (before autovacuum's first ANALYZE of it) otherwise scans the whole table at every outcome.
   */
  readonly #relaxed: Pool;
  /** NOTIFY channel of this schema, so that two Heralds in two schemas of one database do not wake each other. */
  readonly channel: string;
  /** This process's lease tokens: a claim counts only the leases of tokens with another prefix (claim/postgres.ts). */
  readonly leaseTokens = new LeaseTokens();

  readonly #url: string;
  #listener: WorkListener | null = null;

  private constructor(url: string, sql: Pool, relaxed: Pool, channel: string) {
    this.#url = url;
    this.sql = sql;
    this.#relaxed = relaxed;
    this.channel = channel;
  }

  static async open(url: string): Promise<PostgresDatabase> {
    const sql = connect(url, { max: 10 });
    try {
      await migrate(sql);
      const [{ schema }] = await sql<{ schema: string }[]>`SELECT current_schema() AS schema`;
      const relaxed = connect(url, {
        max: 2,
        connection: { synchronous_commit: 'off', enable_seqscan: 'off' },
      });
      return new PostgresDatabase(url, sql, relaxed, `herald_work.${schema}`);
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
        return (await pool.begin((sql) => untilConnectionLoss(fn(wholeRows(sql) as Tx)))) as T;
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

  /** Whether this process leads the work channel (listener.ts): only the lead's claims call for help. */
  get leading(): boolean {
    return this.#listener?.leading ?? false;
  }

  /** Wakes every process's dispatcher at commit, not only the lead's: the lead's claim came back full. */
  async notifyOverflow(sql: Tx): Promise<void> {
    await sql`SELECT pg_notify(${this.channel}, ${OVERFLOW})`;
  }

  /**
   * Calls `wake` on every notification of the channel, and again after each (re)connection of the listening
   * connection, since notifications sent while it was down are lost. Unless this process leads, a notification of
   * new deliveries wakes with `media` only (listener.ts).
   */
  async listen(wake: (work?: Work) => void): Promise<void> {
    this.#listener ??= new WorkListener(this.#url, this.channel);
    await this.#listener.listen(wake);
  }

  async close(): Promise<void> {
    await Promise.all([
      this.sql.end({ timeout: 5 }),
      this.#relaxed.end({ timeout: 5 }),
      this.#listener?.close(),
    ]);
  }
}
