/**
 * The raw baseline, in its own process: Herald's signed POST sent with undici straight to the receiver, no
 * persistence, as many requests as the workload delivers. What Herald reaches is reported as a ratio to this,
 * measured in the same run on the same machine.
 */
import { Agent, request } from 'undici';
import { HEADERS, sign } from '../src/domain/signature.ts';
import { Child, serveParent } from './ipc.ts';
import { baselineEventId, deliveryBody, SECRET, wallNow } from './payloads.ts';

/** Requests in flight: the same 64 connections as Herald's sender keeps per origin (src/delivery/sender.ts). */
export const RAW_CONCURRENCY = 64;

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
  // One keep-alive Agent, configured as Herald's Sender configures its own.
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: RAW_CONCURRENCY });
  let [next, failed] = [0, 0];
  const worker = async () => {
    for (let i = next++; i < total; i = next++) {
      const now = Date.now();
      // Signed per request, as each of Herald's attempts is: the timestamp is part of the signed payload.
      const timestamp = String(Math.floor(now / 1000));
      const body = deliveryBody(i, now);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Herald/bench',
        [HEADERS.eventId]: baselineEventId(i),
        [HEADERS.timestamp]: timestamp,
        [HEADERS.signature]: sign(SECRET, timestamp, body),
      };
      const res = await request(url, { method: 'POST', dispatcher: agent, headers, body });
      await res.body.dump();
      if (res.statusCode !== 200) failed++;
    }
  };
  const started = wallNow();
  await Promise.all(Array.from({ length: RAW_CONCURRENCY }, worker));
  const elapsedMs = wallNow() - started;
  await agent.close();
  return { elapsedMs, failed };
}

if (import.meta.main) {
  const [url, total] = process.argv.slice(2);
  serveParent(true, { run: () => run(url, Number(total)) });
}
