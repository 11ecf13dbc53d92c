/**
 * A webhook's rate limit (`per_second`) as start slots: deliveries start at most that often, evenly spaced, across
 * every process (the store keeps the next free slot). Claims take only the slots within `horizonMs`, so a backlog
 * to a limited webhook waits in the queue, paced, rather than in a lane. Pure.
 */

/** How far ahead a claim takes slots: what waits in a lane waits at most about this long (the claim's window). */
export const PACE_HORIZON_MS = 1000;

/** The slots for up to `wanted` starts, from `nextAt` (the first free slot, or earlier) on, and the next free one. */
export function takeSlots(
  perSecond: number,
  nextAt: number,
  now: number,
  wanted: number,
  horizonMs: number,
): { slots: number[]; nextAt: number } {
  const interval = 1000 / perSecond;
  const slots: number[] = [];
  let at = Math.max(nextAt, now);
  while (slots.length < wanted && at < now + horizonMs) {
    slots.push(Math.ceil(at));
    at += interval;
  }
  return { slots, nextAt: slots.length > 0 ? at : nextAt };
}
