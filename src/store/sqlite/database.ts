/** The SQLite connection: WAL, one prepared statement per query text, and immediate transactions. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { MIGRATIONS } from './migrations.ts';

export class SqliteDatabase {
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new DatabaseSync(file);
    // FULL: a 202 means the event survives a power loss, not only a process crash.
    this.#db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;',
    );
    this.#migrate();
  }

  #migrate(): void {
    this.tx(() => {
      const { user_version } = this.#db.prepare('PRAGMA user_version').get() as { user_version: number };
      for (let v = user_version; v < MIGRATIONS.length; v++) this.#db.exec(MIGRATIONS[v]);
      this.#db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
    });
  }

  /** One prepared statement per query text, reused. */
  q(sql: string): StatementSync {
    let s = this.#statements.get(sql);
    if (!s) {
      s = this.#db.prepare(sql);
      this.#statements.set(sql, s);
    }
    return s;
  }

  tx<T>(fn: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = fn();
      this.#db.exec('COMMIT');
      return result;
    } catch (err) {
      this.#db.exec('ROLLBACK');
      throw err;
    }
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
