/**
 * The systems a workload can be measured on, started for one measurement and stopped after it: Herald (as
 * `npm start` runs it, on fresh data), the raw baseline (nothing to start: the publisher sends the deliveries
 * itself), the relay (relay.ts: takes events as Herald does and delivers them, keeping nothing) and BullMQ on a
 * Redis of the bench's own. Each says which processes are its own, for the CPU figures.
 */
import { BullmqWorker } from './bullmq-worker.ts';
import { freshData } from './fresh-data.ts';
import { HeraldProcess } from './herald-process.ts';
import type { System, Target } from './loader.ts';
import { Publisher } from './publisher.ts';
import { RedisServer } from './redis-server.ts';
import { Relay } from './relay.ts';

export const SYSTEM_LABEL: Record<System, string> = {
  herald: 'Herald',
  relay: 'relay',
  raw: 'raw',
  bullmq: 'BullMQ-AOF',
};

/** Jobs the BullMQ worker runs at once: Herald's cap per webhook (64), up to its attempts in flight (512). */
const BULLMQ_CONCURRENCY_PER_WEBHOOK = 64;
const BULLMQ_MAX_CONCURRENCY = 512;

export interface RunningSystem {
  target: Target;
  /** The system's own processes by name (the publisher and the receiver are the workload's). */
  processes: Record<string, number>;
  stop(): Promise<void>;
}

export interface OpenHerald {
  herald: HeraldProcess;
  /** The bench's own client of Herald's API, for set-up and clean-up. */
  publisher: Publisher;
  stop(): Promise<void>;
}

/** How a system is started: on which store, profiled or not, and Herald's environment beyond the bench's. */
export interface SystemOptions {
  databaseUrl: string | null;
  profileDir?: string;
  /** EM: ENGINE_MEDIA_HEADERS and ENGINE_MEDIA_PREFIXES, so that Herald can fetch from the bench's file server. */
  env?: Record<string, string>;
}

/** A Herald process on fresh data (a temp DATA_DIR, or a scratch PostgreSQL schema), removed by `stop`. */
export async function openHerald(o: SystemOptions): Promise<OpenHerald> {
  const data = await freshData(o.databaseUrl);
  let herald: HeraldProcess;
  try {
    herald = await HeraldProcess.start({ ...data, dispatch: true, profileDir: o.profileDir, env: o.env });
  } catch (err) {
    await data.remove();
    throw err;
  }
  const publisher = new Publisher(herald.url);
  return {
    herald,
    publisher,
    async stop() {
      try {
        await publisher.close();
        await herald.stop();
      } finally {
        await data.remove();
      }
    },
  };
}

/** Starts `system` with one webhook per URL in `urls` (all signed with the bench's secret). */
export async function startSystem(system: System, urls: string[], o: SystemOptions): Promise<RunningSystem> {
  switch (system) {
    case 'raw':
      return { target: { system, urls }, processes: {}, stop: async () => {} };
    case 'relay': {
      const relay = await Relay.start(urls);
      return {
        target: { system, url: relay.url, instanceId: 'ins_relay' },
        processes: { 'relay process': relay.pid },
        stop: () => relay.stop(),
      };
    }
    case 'herald': {
      const h = await openHerald(o);
      const instanceId = await h.publisher.createInstance('engine stream');
      for (const url of urls) await h.publisher.createWebhook(instanceId, url);
      return {
        target: { system, url: h.herald.url, instanceId },
        processes: { 'Herald process': h.herald.pid },
        async stop() {
          await h.publisher.deleteInstance(instanceId);
          await h.stop();
        },
      };
    }
    case 'bullmq': {
      const redis = await RedisServer.start();
      const concurrency = Math.min(BULLMQ_CONCURRENCY_PER_WEBHOOK * urls.length, BULLMQ_MAX_CONCURRENCY);
      let worker: BullmqWorker;
      try {
        worker = await BullmqWorker.start(redis.port, concurrency);
      } catch (err) {
        await redis.stop();
        throw err;
      }
      return {
        target: { system, redisPort: redis.port, urls },
        processes: { 'BullMQ worker': worker.pid, 'redis-server': redis.pid },
        async stop() {
          try {
            await worker.stop();
          } finally {
            await redis.stop();
          }
        },
      };
    }
  }
}
