/**
 * The raw baseline, in its own process: Herald's signed POST sent with undici straight to the receiver, no
 * persistence, as many requests as the workload delivers. What Herald reaches is reported as a ratio to this,
 * measured in the same run on the same machine.
 */
import { Child, serveParent } from './ipc.ts';
import { baselineEventId, deliveryBody, wallNow } from './payloads.ts';
import { DELIVERY_CONNECTIONS, deliveryAgent, signedPost } from './signed-post.ts';

/** POSTs per second of `total` signed requests to `url`; fails if any is not answered 200. */
export async function rawBaseline(url: string, total: number): Promise<number> {
  const child = new Child(import.meta.filename, [url, String(total)]);
  try {
    await child.ready;
    const { elapsedMs, failed } = await child.call<{ elapsedMs: number; failed: number }>('run');
    if (failed > 0) throw new Error(`raw baseline: ${failed} requests not answered 200`);
    return total / (elapsedMs / 1000);
  } finally {
    await child.stop();
  }
}

async function run(url: string, total: number) {
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
  const [url, total] = process.argv.slice(2);
  serveParent(true, { run: () => run(url, Number(total)) });
}
