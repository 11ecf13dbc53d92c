/**
 * Failed authentications counted per client address, a minute at a time: beyond the limit, that address is refused
 * (429) for the rest of its minute whatever it sends, so guessing keys or links costs a minute per few dozen guesses.
 * Arithmetic over the times it is given, so tests drive it with a fake clock.
 */
import { HttpError } from './errors.ts';

export const WINDOW_MS = 60_000;
/** Addresses remembered at most; beyond it the oldest windows are forgotten first (a flood of addresses). */
const MAX_ADDRESSES = 100_000;

export class AuthFailures {
  readonly #limit: number;
  /** Insertion order is the order windows started: the oldest first. */
  readonly #windows = new Map<string, { start: number; failures: number }>();

  /** `limit`: failures allowed per address and minute; 0 turns the limit off. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Ms until `address` may try again at `now`; 0 when it may now. */
  blockedFor(address: string, now: number): number {
    if (this.#limit === 0) return 0;
    const w = this.#windows.get(address);
    if (!w || now - w.start >= WINDOW_MS || w.failures < this.#limit) return 0;
    return w.start + WINDOW_MS - now;
  }

  /** Counts a failure of `address`; true when it is the one that reaches the limit (worth saying once). */
  record(address: string, now: number): boolean {
    if (this.#limit === 0) return false;
    let w = this.#windows.get(address);
    if (!w || now - w.start >= WINDOW_MS) {
      this.#windows.delete(address);
      w = { start: now, failures: 0 };
      this.#windows.set(address, w);
      this.#forget(now);
    }
    w.failures++;
    return w.failures === this.#limit;
  }

  get size(): number {
    return this.#windows.size;
  }

  #forget(now: number): void {
    for (const [address, w] of this.#windows) {
      if (this.#windows.size <= MAX_ADDRESSES && now - w.start < WINDOW_MS) break;
      this.#windows.delete(address);
    }
  }
}

export const authFailuresLimited = (limit: number, waitS: number) =>
  new HttpError(
    'rate_limited',
    `too many failed authentications from this address (more than ${limit} a minute, AUTH_FAILURES_PER_MIN); ` +
      `retry in ${waitS} seconds`,
  );
