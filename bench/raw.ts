/**
 * The raw baseline, in its own process: Herald's signed POST sent with undici straight to the receiver, no
 * persistence, as many requests as the workload delivers. What Herald reaches is reported as a ratio to this,
 * measured in the same run on the same machine. W3's leg (`rawIsolation`) sends the same paced requests to a healthy
 * receiver while requests to a receiver that never answers hold their connections.
 */
import { paced } from './drive.ts';
import { Child, serveParent } from './ipc.ts';
import { baselineEventId, deliveryBody, wallNow } from './payloads.ts';
import { DELIVERY_CONNECTIONS, deliveryAgent, signedPost } from './signed-post.ts';

/** In a child process of its own, for the duration of `fn`. */
async function withChild<T>(fn: (child: Child) => Promise<T>): Promise<T> {
  const child = new Child(import.meta.filename, []);
  try {
    await child.ready;
    return await fn(child);
  } finally {
    await child.stop();
  }
}

/** POSTs per second of `total` signed requests to `url`, after `warmup` not timed; fails if any is not answered 200. */
export function rawBaseline(url: string, total: number, warmup = 0): Promise<number> {
  return withChild(async (child) => {
    if (warmup > 0) await child.call('run', { url, total: warmup });
    const { elapsedMs, failed } = await child.call<{ elapsedMs: number; failed: number }>('run', {
      url,
      total,
    });
    if (failed > 0) throw new Error(`raw baseline: ${failed} requests not answered 200`);
    return total / (elapsedMs / 1000);
  });
}

export interface Isolation {
  healthy: string;
  dead: string;
  /** Requests to the dead receiver, all sent first. */
  stuck: number;
  /** Requests to the healthy one, at `perSecond`. */
  n: number;
  perSecond: number;
}

/** W3 without Herald: when each healthy request was sent (`wallNow`), by its event id. */
export function rawIsolation(spec: Isolation): Promise<Map<string, number>> {
  return withChild(async (child) => new Map(await child.call<[string, number][]>('isolation', spec)));
}

async function isolation({ healthy, dead, stuck, n, perSecond }: Isolation): Promise<[string, number][]> {
  const agent = deliveryAgent();
  const id = (i: number) => baselineEventId(stuck + i);
  // Never answered: they hold the dead receiver's connections until the agent is destroyed.
  for (let i = 0; i < stuck; i++)
    signedPost(agent, dead, baselineEventId(i), deliveryBody(i, Date.now())).catch(() => {});
  const driven = await paced(n, perSecond, async (i) => {
    const status = await signedPost(agent, healthy, id(i), deliveryBody(stuck + i, Date.now()));
    if (status !== 200) throw new Error(`raw W3: answered ${status}`);
  });
  await agent.destroy();
  return driven.sentAt.map((at, i) => [id(i), at]);
}

async function run({ url, total }: { url: string; total: number }) {
  const agent = deliveryAgent();
  let [next, failed] = [0, 0];
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const status = await signedPost(agent, url, baselineEventId(i), deliveryBody(i, Date.now()));
      if (status !== 200) failed++;
    }
  };
  const started = wallNow();
  // Requests in flight: as many as the agent's connections, as Herald's sender keeps per webhook.
  await Promise.all(Array.from({ length: DELIVERY_CONNECTIONS }, worker));
  const elapsedMs = wallNow() - started;
  await agent.close();
  return { elapsedMs, failed };
}

if (import.meta.main) {
  serveParent(true, {
    run: (arg) => run(arg as { url: string; total: number }),
    isolation: (arg) => isolation(arg as Isolation),
  });
}
