/**
 * The publisher of the engine stream and of W2, in a process of its own so that its CPU is its own: it offers
 * events to one system, closed-loop or paced (drive.ts), and reports when each was offered and acknowledged.
 * - herald: POST /instances/{id}/events, one event per request as an engine's webhook sends it; acknowledged by
 *   the 202. With `engine` (EM), WAHA's own body to POST /instances/{id}/engine/waha instead, with or without a
 *   file on the engine's file server. The relay (relay.ts) is published to the same way.
 * - raw: the delivery itself, signed as Herald signs, straight to each webhook's URL at the receiver; acknowledged
 *   by the receiver's 200 (no persistence: the floor the others are measured against).
 * - bullmq: one job per webhook (queue.add, addBulk for several); acknowledged when add() resolves, i.e. when
 *   Redis has the job (AOF fsync follows within a second).
 * Each publisher serialises its event when it sends it, as an engine would.
 */
import { Queue } from 'bullmq';
import { type DeliveryJob, JOB_OPTIONS, QUEUE, redisClient } from './bullmq-worker.ts';
import { closedLoop, type Driven, paced, type Send } from './drive.ts';
import { Child, serveParent } from './ipc.ts';
import { deliveryBody, wahaMessage } from './payloads.ts';
import { messageEvent, Publisher } from './publisher.ts';
import { deliveryAgent, signedPost } from './signed-post.ts';

export type System = 'herald' | 'relay' | 'raw' | 'bullmq';

/** WAHA's bodies instead of Herald's events; `files`: the file server's URL prefix, or null for text only. */
export interface EngineBodies {
  files: string | null;
}

export type Target =
  | { system: 'herald'; url: string; instanceId: string; engine?: EngineBodies }
  | { system: 'relay'; url: string; instanceId: string }
  | { system: 'raw'; urls: string[] }
  | { system: 'bullmq'; redisPort: number; urls: string[] };

export interface RunSpec {
  /** Event ids are `prefix` + index (publisher.ts's series), indices `from` … `from + n - 1`. */
  prefix: string;
  from: number;
  n: number;
  schedule: { kind: 'closed'; concurrency: number } | { kind: 'paced'; perSecond: number };
}

export class Loader {
  readonly #child: Child;

  private constructor(child: Child) {
    this.#child = child;
  }

  static async start(target: Target): Promise<Loader> {
    const child = new Child(import.meta.filename, [JSON.stringify(target)]);
    await child.ready;
    return new Loader(child);
  }

  get pid(): number {
    return this.#child.pid;
  }

  run(spec: RunSpec): Promise<Driven> {
    return this.#child.call('run', spec);
  }

  async stop(): Promise<void> {
    await this.#child.call('close').catch(() => {});
    await this.#child.stop();
  }
}

/** What sends event `index` of series `prefix` to the target, and how to let go of it afterwards. */
function sender(target: Target): {
  send: (prefix: string, index: number) => Promise<void>;
  close: () => Promise<void>;
} {
  switch (target.system) {
    case 'herald':
    case 'relay': {
      // W2's 128 connections, as before: more than the closed loop's 64 requests in flight, so that a paced
      // burst behind a slow answer never waits for a connection.
      const publisher = new Publisher(target.url, 128);
      const { instanceId } = target;
      const engine = target.system === 'herald' ? target.engine : undefined;
      return {
        send: engine
          ? (prefix, i) =>
              publisher.publishToEngine(
                instanceId,
                JSON.stringify(wahaMessage(`${prefix}${i}`, i, engine.files)),
              )
          : (prefix, i) => publisher.publish(instanceId, JSON.stringify(messageEvent(prefix, i))),
        close: () => publisher.close(),
      };
    }
    case 'raw': {
      const agent = deliveryAgent();
      return {
        async send(prefix, i) {
          const id = `${prefix}${i}`;
          const body = deliveryBody(i, Date.now(), id);
          const statuses = await Promise.all(target.urls.map((url) => signedPost(agent, url, id, body)));
          if (statuses.some((s) => s !== 200))
            throw new Error(`raw: receiver answered ${statuses.join(',')}`);
        },
        close: () => agent.close(),
      };
    }
    case 'bullmq': {
      const connection = redisClient(target.redisPort);
      const queue = new Queue<DeliveryJob>(QUEUE, { connection });
      return {
        async send(prefix, i) {
          const id = `${prefix}${i}`;
          const body = deliveryBody(i, Date.now(), id);
          const jobs = target.urls.map((url) => ({ name: 'delivery', data: { url, event_id: id, body } }));
          if (jobs.length === 1) await queue.add(jobs[0].name, jobs[0].data, JOB_OPTIONS);
          else await queue.addBulk(jobs.map((j) => ({ ...j, opts: JOB_OPTIONS })));
        },
        async close() {
          await queue.close();
          connection.disconnect();
        },
      };
    }
  }
}

function main(target: Target): void {
  const { send, close } = sender(target);
  serveParent(true, {
    run: (arg) => {
      const { prefix, from, n, schedule } = arg as RunSpec;
      const offer: Send = (i) => send(prefix, from + i);
      return schedule.kind === 'closed'
        ? closedLoop(n, schedule.concurrency, offer)
        : paced(n, schedule.perSecond, offer);
    },
    close: async () => {
      await close();
      setImmediate(() => process.exit(0));
    },
  });
}

if (import.meta.main) main(JSON.parse(process.argv[2]));
