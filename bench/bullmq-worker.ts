/**
 * The BullMQ-on-Redis baseline's delivery side, in a process of its own: a BullMQ Worker that takes each job
 * (one delivery: destination, event id, body) and POSTs it to the receiver signed as Herald signs, through the
 * same helper as the raw baseline. A job fails on anything but a 2xx, and BullMQ retries it on Herald's schedule
 * (JOB_OPTIONS, which the publisher gives each job). Its CPU is read from /proc like every other process's.
 */
import { type JobsOptions, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Child, serveParent } from './ipc.ts';
import { deliveryAgent, signedPost } from './signed-post.ts';

export const QUEUE = 'herald-bench-deliveries';

/** What a job carries: the delivery, its body serialised once at publish as Herald's is at ingest. */
export interface DeliveryJob {
  url: string;
  event_id: string;
  body: string;
}

/**
 * Herald's delivery rules, as BullMQ says them: 6 attempts, 5, 10, 20, 40, 80 s apart (exponential from 5 s).
 * Finished jobs are kept 14 days, as Herald keeps its delivery log (RETENTION_DAYS): BullMQ's default keeps them
 * forever, and removing them at once would spare it work Herald does.
 */
export const JOB_OPTIONS: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 5000 },
  removeOnComplete: { age: 14 * 24 * 3600 },
  removeOnFail: { age: 14 * 24 * 3600 },
};

/** A client as BullMQ needs one for blocking commands (it refuses a maxRetriesPerRequest other than null). */
export const redisClient = (port: number): Redis =>
  new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });

export class BullmqWorker {
  readonly #child: Child;

  private constructor(child: Child) {
    this.#child = child;
  }

  /** `concurrency`: jobs in flight at once (the same bound as Herald's attempts in flight for the workload). */
  static async start(redisPort: number, concurrency: number): Promise<BullmqWorker> {
    const child = new Child(import.meta.filename, [String(redisPort), String(concurrency)]);
    await child.ready;
    return new BullmqWorker(child);
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Lets jobs in flight finish (Worker.close), then ends the process. */
  async stop(): Promise<void> {
    await this.#child.call('close').catch(() => {});
    await this.#child.stop();
  }
}

async function main(redisPort: number, concurrency: number): Promise<void> {
  const agent = deliveryAgent();
  const worker = new Worker<DeliveryJob>(
    QUEUE,
    async (job) => {
      const { url, event_id, body } = job.data;
      const status = await signedPost(agent, url, event_id, body);
      if (status < 200 || status > 299) throw new Error(`receiver answered ${status}`);
    },
    { connection: redisClient(redisPort), concurrency },
  );
  await worker.waitUntilReady();
  serveParent(true, {
    close: async () => {
      await worker.close();
      await agent.close();
      setImmediate(() => process.exit(0));
    },
  });
}

if (import.meta.main) await main(Number(process.argv[2]), Number(process.argv[3]));
