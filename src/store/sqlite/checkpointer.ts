/**
 * WAL checkpoints in a worker thread, on a connection of its own. SQLite's automatic checkpoint runs inside the
 * COMMIT that crosses the threshold: it copies pages into the database file and syncs it, on the event loop, and
 * it was a third of Herald's CPU profile under fan-out. A PASSIVE checkpoint from another connection blocks no
 * writer, so the worker does that work on the other core. The main connection's own automatic checkpoint, at a
 * higher threshold, is what lets the WAL start over under steady writes (database.ts), and the backstop if the
 * worker falls behind.
 */
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints; the WAL grows by at most what is written in this time. */
const INTERVAL_MS = 200;

export class Checkpointer {
  readonly #worker: Worker;
  readonly #exited: Promise<unknown>;

  constructor(file: string) {
    // Its only garbage is a timer's: the smallest young generation V8 takes keeps the thread's memory down.
    this.#worker = new Worker(new URL('./checkpoint-thread.js', import.meta.url), {
      workerData: { file, intervalMs: INTERVAL_MS },
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
    });
    // A checkpoint never keeps the process alive, and its failure only leaves the work to the backstop.
    this.#worker.unref();
    this.#worker.on('error', () => {});
    this.#exited = new Promise((resolve) => this.#worker.once('exit', resolve));
  }

  /** Idempotent: the second call waits for the same exit. */
  async close(): Promise<void> {
    // Waiting for an unreferenced worker would not keep the process alive to see it exit.
    this.#worker.ref();
    this.#worker.postMessage('stop');
    await this.#exited;
  }
}
