/**
 * The Checkpointer's thread (checkpointer.ts): PASSIVE checkpoints on a connection of its own, every `intervalMs`,
 * until the first message. Plain JavaScript, so that this thread does not load Node's TypeScript stripper, which
 * costs each thread that runs a .ts file about 16 MB of memory.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 5000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => checkpoint.get(), workerData.intervalMs);
parentPort?.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
