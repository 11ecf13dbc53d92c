/**
 * What the benchmark shares with its two child processes, and those children, each in its own process so that
 * its work never shares a thread with what is measured:
 *   peers.ts receiver                      HTTP server answering 200, empty body; IPC: { port }, then
 *                                          { count, lastAt } for each 'stats' or 'reset' command
 *   peers.ts raw <url> <n> <concurrency>   the baseline: Herald's signed POST straight to the receiver, no
 *                                          persistence; IPC: { elapsedMs, failed }
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { HEADERS, sign } from '../src/domain/signature.ts';

export const SECRET = 'whsec_bench_0123456789abcdef';

/** Epoch milliseconds with sub-millisecond resolution, comparable between the processes of one machine. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/** A message event payload (seed §2.3); `i` keeps ids and bodies distinct, as in real traffic. */
export const messagePayload = (i: number) => ({
  id: `false_491701234567@c.us_3EB0${String(i).padStart(8, '0')}`,
  from: '491701234567@c.us',
  from_phone: '491701234567',
  fromMe: false,
  body: `Hello ${i}, see you at six at the station`,
  hasMedia: false,
});

/** 30 characters, as long as the ids Herald generates (`evt_` + 26). */
const baselineEventId = (i: number) => `evt_BENCH${String(i).padStart(21, '0')}`;

/** The body as Herald serialises it at ingest (src/store/sqlite/queue.ts): the baseline sends as many bytes. */
export const deliveryBody = (i: number, timestamp: number) =>
  JSON.stringify({
    event_id: baselineEventId(i),
    event: 'message',
    instance_id: 'ins_BENCH000000000000000000000',
    timestamp,
    payload: messagePayload(i),
  });

function receiver(): void {
  let [count, lastAt] = [0, 0];
  const server = createServer((req, res) => {
    // A request counts once its whole body has arrived, as a real receiver needs it before answering.
    req.resume().on('end', () => {
      [count, lastAt] = [count + 1, wallNow()];
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  process.on('message', (command) => {
    if (command === 'reset') [count, lastAt] = [0, 0];
    process.send?.({ count, lastAt });
  });
  // Without its parent there is nobody to report to: end, even if the parent died without closing us.
  process.on('disconnect', () => process.exit(0));
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
}

async function raw(url: string, total: number, concurrency: number): Promise<void> {
  // One keep-alive Agent, configured as Herald's Sender configures its own (src/delivery/sender.ts).
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: concurrency });
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
      await res.body.text();
      if (res.statusCode !== 200) failed++;
    }
  };
  const started = wallNow();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = wallNow() - started;
  await agent.close();
  process.send?.({ elapsedMs, failed });
  process.disconnect?.();
}

if (import.meta.main) {
  const [role, url, total, concurrency] = process.argv.slice(2);
  if (role === 'receiver') receiver();
  else await raw(url, Number(total), Number(concurrency));
}
