/**
 * The two ways the bench offers events, whatever receives them (Herald's API, BullMQ's queue, the receiver
 * itself): a closed loop, in which each of `concurrency` senders offers its next event as soon as its last one is
 * acknowledged (an engine's webhook: one request per event, as fast as they are answered), and a paced schedule,
 * which offers events at a steady rate whatever the answers take (W2, W3).
 */
import { wallNow } from './payloads.ts';

/** Offers event `i`; resolves when it is acknowledged (Herald's 202, BullMQ's add(), the receiver's 200). */
export type Send = (i: number) => Promise<void>;

export interface Driven {
  /** When each event was offered (monotonic ms, `wallNow`), by index. */
  sentAt: number[];
  /** Offer → acknowledgement of each event, ms, by index. */
  ackMs: number[];
  startedAt: number;
  /** When the last acknowledgement came. */
  ackedAt: number;
}

async function timed(i: number, send: Send, driven: Driven): Promise<void> {
  const at = wallNow();
  driven.sentAt[i] = at;
  await send(i);
  driven.ackMs[i] = wallNow() - at;
}

const start = (n: number): Driven => ({
  sentAt: new Array(n),
  ackMs: new Array(n),
  startedAt: wallNow(),
  ackedAt: 0,
});

/** Events 0…n-1 through `concurrency` senders, each waiting for its acknowledgement before the next. */
export async function closedLoop(n: number, concurrency: number, send: Send): Promise<Driven> {
  const driven = start(n);
  let next = 0;
  const sender = async () => {
    for (let i = next++; i < n; i = next++) await timed(i, send, driven);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, sender));
  driven.ackedAt = wallNow();
  return driven;
}

/** Events 0…n-1 at `perSecond`, on schedule whatever the answers take; `onSent` counts the events offered. */
export async function paced(
  n: number,
  perSecond: number,
  send: Send,
  onSent?: (count: number) => void,
): Promise<Driven> {
  const driven = start(n);
  const pending: Promise<void>[] = [];
  let i = 0;
  while (i < n) {
    const due = Math.min(n, Math.floor(((wallNow() - driven.startedAt) * perSecond) / 1000) + 1);
    for (; i < due; i++) {
      const p = timed(i, send, driven);
      // Handled here so that a failure waits for Promise.all below instead of ending the process at once.
      p.catch(() => {});
      pending.push(p);
    }
    onSent?.(i);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  driven.ackedAt = wallNow();
  return driven;
}
