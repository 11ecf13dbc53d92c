/**
 * One process per SQLite database: its leases live in memory (leases.ts), so a second Herald on the same data
 * would send every delivery again. An exclusive lock on a companion file refuses the second one. The operating
 * system holds it for as long as the process lives and drops it however the process ends, so a crash leaves no
 * stale lock behind.
 */
import { DatabaseSync } from 'node:sqlite';
import { createPrivateFile } from '../../private-files.ts';

export class StoreInUse extends Error {}

export class ProcessLock {
  readonly #lock: DatabaseSync;

  constructor(file: string) {
    createPrivateFile(`${file}.lock`);
    this.#lock = new DatabaseSync(`${file}.lock`);
    try {
      // In exclusive locking mode SQLite keeps the lock of its first write until the connection closes.
      this.#lock.exec(
        `PRAGMA busy_timeout = 0; PRAGMA locking_mode = EXCLUSIVE;
         CREATE TABLE IF NOT EXISTS held (pid INTEGER); DELETE FROM held; INSERT INTO held VALUES (${process.pid});`,
      );
    } catch (err) {
      this.#lock.close();
      if (!/locked|busy/i.test((err as Error).message)) throw err;
      throw new StoreInUse(
        `${file} is in use by another Herald process; one process serves a SQLite database (use PostgreSQL to run several)`,
      );
    }
  }

  release(): void {
    if (this.#lock.isOpen) this.#lock.close();
  }
}
