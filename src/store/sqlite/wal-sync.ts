/**
 * Group commit for the embedded store: a transaction committed with synchronous=NORMAL has its WAL frames written
 * but not flushed; `flush()` makes them durable with an fdatasync of the WAL file on libuv's thread pool, so the
 * event loop keeps serving (and delivering) while the disk syncs, and every commit made while one sync runs is
 * covered by the next — one sync for many commits, as SQLite's synchronous=FULL cannot do (it syncs in the
 * committing call, blocking the thread, once per commit).
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

export class WalSync {
  #fd: number;
  /** The sync in progress: it covers only what was written before it started. */
  #running: Promise<void> | null = null;
  /** The sync that starts when the running one ends, covering everything written meanwhile. */
  #next: Promise<void> | null = null;

  /** `walFile` must exist (the database has written to it): its fd stays open, the file is reused across resets. */
  constructor(walFile: string) {
    this.#fd = openSync(walFile, 'r+');
  }

  /** Resolves when everything committed before the call is on disk. */
  flush(): Promise<void> {
    if (!this.#running) return this.#start();
    this.#next ??= this.#running.then(
      () => this.#start(),
      () => this.#start(),
    );
    return this.#next;
  }

  #start(): Promise<void> {
    this.#next = null;
    const running = new Promise<void>((resolve, reject) =>
      fdatasync(this.#fd, (err) => (err ? reject(err) : resolve())),
    );
    this.#running = running;
    const done = () => {
      if (this.#running === running) this.#running = null;
    };
    running.then(done, done);
    return running;
  }

  /** Idempotent, as closing the store is. */
  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}
