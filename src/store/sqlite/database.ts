/**
 * The SQLite connection: WAL, one prepared statement per query text, immediate transactions, and the work channel
 * (in-process: one process owns the database).
 */
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { createPrivateFile, makePrivateDir } from '../../private-files.ts';
import type { Work } from '../records.ts';
import { Checkpointer } from './checkpointer.ts';
import { MIGRATIONS } from './migrations.ts';
import { ProcessLock } from './process-lock.ts';
import { WalSync } from './wal-sync.ts';

/**
 * How a transaction reaches the disk. `sync`: flushed before tx() returns (synchronous=FULL, the connection's
 * default). `group`: written with synchronous=NORMAL, flushed by durableTx() off the event loop together with the
 * commits around it. `lazy`: synchronous=NORMAL and no flush of its own (the next flush or checkpoint covers it):
 * a process crash loses nothing, a power loss may roll it back — only for the dispatcher's leases and outcomes,
 * where a rollback means the attempt is made again (at least once).
 */
export type Durability = 'sync' | 'group' | 'lazy';

/** SQLite's primary result codes (the low byte of an extended code) that mean the disk, not the call, failed. */
const UNAVAILABLE: Record<number, string> = {
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
};
/** What the group commit's fdatasync may fail with when the disk is full or failing. */
const UNAVAILABLE_FS = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS']);

/** The reason when `err` is the database's own failure (a full or failing disk), in SQLite's words; else null. */
export function sqliteUnavailable(err: unknown): string | null {
  const e = err as { code?: string; errcode?: number; errstr?: string; message?: string };
  if (e?.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    const name = UNAVAILABLE[e.errcode & 0xff];
    return name ? `${e.errstr ?? e.message} (${name})` : null;
  }
  return e?.code && UNAVAILABLE_FS.has(e.code) ? `${e.message}` : null;
}

export class SqliteDatabase {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  readonly #wal: WalSync | null;
  readonly #checkpointer: Checkpointer | null;
  readonly #workListeners: ((work: Work) => void)[] = [];
  readonly #catalogListeners: (() => void)[] = [];
  readonly #lock: ProcessLock | null;

  constructor(file: string) {
    if (file !== ':memory:') {
      // Created 0600 before SQLite opens it, so that its -wal and -shm, which take its mode, are private too.
      makePrivateDir(dirname(file));
      createPrivateFile(file);
    }
    this.#lock = file === ':memory:' ? null : new ProcessLock(file);
    this.#db = new DatabaseSync(file);
    // FULL: a 202 means the event survives a power loss, not only a process crash. 8 MiB of page cache holds
    // the queue's indexes of a large backlog. Checkpoints are the Checkpointer's, but under steady writes its
    // checkpoints never find the WAL wholly copied at a writer's start, so only this connection's automatic
    // checkpoint lets the WAL start over: fsyncs on the event loop each time. At 40,000 pages (160 MB of WAL
    // at most) that is every ~3 s at 1,000 events/s, against every ~0.8 s at 10,000.
    this.#db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;
       PRAGMA cache_size = -8192; PRAGMA wal_autocheckpoint = 40000;`,
    );
    this.#migrate();
    this.#watchCatalog();
    // The migration above has written to the WAL, so the file exists.
    this.#wal = file === ':memory:' ? null : new WalSync(`${file}-wal`);
    this.#checkpointer = file === ':memory:' ? null : new Checkpointer(file);
  }

  /**
   * Instances created or deleted, webhooks written in any way (a cascade included): the database itself calls back,
   * through temporary triggers (this connection's own), so that what is kept in memory of them cannot go stale.
   */
  #watchCatalog(): void {
    this.#db.function('herald_catalog_changed', () => {
      for (const changed of this.#catalogListeners) changed();
      return null;
    });
    const watched = [
      ['instances', 'INSERT'],
      ['instances', 'DELETE'],
      ['webhooks', 'INSERT'],
      ['webhooks', 'UPDATE'],
      ['webhooks', 'DELETE'],
    ];
    for (const [table, change] of watched) {
      this.#db.exec(`CREATE TEMP TRIGGER ${table}_${change.toLowerCase()}_watched AFTER ${change} ON main.${table}
                     BEGIN SELECT herald_catalog_changed(); END`);
    }
  }

  /** Calls `changed` whenever an instance is created or deleted, or a webhook written. */
  onCatalogChange(changed: () => void): void {
    this.#catalogListeners.push(changed);
  }

  /**
   * With foreign keys off, which a table rebuilt needs (its drop would otherwise delete every row that refers to it)
   * and which cannot change inside a transaction; they are checked before the commit instead.
   */
  #migrate(): void {
    const { user_version } = this.#db.prepare('PRAGMA user_version').get() as { user_version: number };
    this.#db.exec('PRAGMA foreign_keys = OFF');
    try {
      this.tx(() => {
        for (let v = user_version; v < MIGRATIONS.length; v++) this.#db.exec(MIGRATIONS[v]);
        const broken = this.#db.prepare('PRAGMA foreign_key_check').all();
        if (broken.length > 0) throw new Error(`migration left ${broken.length} rows referring to none`);
        this.#db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
      });
    } finally {
      this.#db.exec('PRAGMA foreign_keys = ON');
    }
  }

  /** One prepared statement per query text, reused. */
  q(sql: string): StatementSync {
    return this.#prepared(sql, false);
  }

  /**
   * The same, returning each row as an array, several times cheaper than an object per row: the hot scans pass
   * over many rows (a claim passes over the deliveries this process holds).
   */
  rows(sql: string): StatementSync {
    return this.#prepared(sql, true);
  }

  #prepared(sql: string, arrays: boolean): StatementSync {
    const key = arrays ? `rows:${sql}` : sql;
    let s = this.#statements.get(key);
    if (!s) {
      s = this.#db.prepare(sql);
      if (arrays) s.setReturnArrays(true);
      this.#statements.set(key, s);
    }
    return s;
  }

  /** Transaction control goes through prepared statements too, so that no claim parses SQL. */
  tx<T>(fn: () => T, durability: Durability = 'sync'): T {
    if (durability !== 'sync') this.q('PRAGMA synchronous = NORMAL').run();
    try {
      this.q('BEGIN IMMEDIATE').run();
      try {
        const result = fn();
        this.q('COMMIT').run();
        return result;
      } catch (err) {
        this.#rollback();
        throw err;
      }
    } finally {
      if (durability !== 'sync') this.q('PRAGMA synchronous = FULL').run();
    }
  }

  /** A consistent read of several statements, with no write lock taken and nothing to flush. */
  read<T>(fn: () => T): T {
    this.q('BEGIN').run();
    try {
      return fn();
    } finally {
      if (this.#db.isTransaction) this.q('COMMIT').run();
    }
  }

  /**
   * On some errors (SQLITE_FULL, SQLITE_IOERR) SQLite has already rolled the whole transaction back; a ROLLBACK
   * then fails with "cannot rollback - no transaction is active", which would be thrown instead of the real error.
   */
  #rollback(): void {
    if (this.#db.isTransaction) this.q('ROLLBACK').run();
  }

  /**
   * Called inside a transaction that queued work. Listeners run once the current synchronous step is over, so after
   * its COMMIT: for a durableTx that is before the flush, and a dispatcher may start while the disk catches up.
   */
  notifyWork(work: Work = 'deliveries'): void {
    queueMicrotask(() => {
      for (const wake of this.#workListeners) wake(work);
    });
  }

  listen(wake: (work: Work) => void): void {
    this.#workListeners.push(wake);
  }

  /**
   * A transaction that is on disk when the promise resolves, its flush shared with concurrent commits. `committed`
   * runs right after the commit, before the flush: what it starts does not wait for the disk.
   */
  async durableTx<T>(fn: () => T, committed?: (result: T) => void): Promise<T> {
    const result = this.tx(fn, 'group');
    committed?.(result);
    await this.#wal?.flush();
    return result;
  }

  async close(): Promise<void> {
    this.#wal?.close();
    await this.#checkpointer?.close();
    if (this.#db.isOpen) this.#db.close();
    this.#lock?.release();
  }
}
