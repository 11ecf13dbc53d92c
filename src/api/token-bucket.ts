/**
 * Token buckets, one per key: `ratePerS` tokens flow in each second up to `capacity`; a request takes one.
 * Pure arithmetic over the times it is given, so tests drive it with a fake clock.
 */
export class TokenBuckets {
  readonly #rate: number;
  readonly #capacity: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(ratePerS: number, capacity: number) {
    if (!(ratePerS > 0) || !(capacity >= 1))
      throw new Error('a token bucket needs a rate > 0 and capacity >= 1');
    this.#rate = ratePerS;
    this.#capacity = capacity;
  }

  /** Takes a token for `key` at time `now` (ms). Returns 0 when granted, else the ms until one is available. */
  take(key: string, now: number): number {
    const b = this.#buckets.get(key) ?? { tokens: this.#capacity, at: now };
    // A clock that steps back never mints tokens.
    b.tokens = Math.min(this.#capacity, b.tokens + (Math.max(0, now - b.at) * this.#rate) / 1000);
    b.at = Math.max(b.at, now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.#remember(key, b, now);
      return 0;
    }
    this.#remember(key, b, now);
    return Math.ceil(((1 - b.tokens) * 1000) / this.#rate);
  }

  get size(): number {
    return this.#buckets.size;
  }

  #remember(key: string, bucket: { tokens: number; at: number }, now: number): void {
    this.#buckets.set(key, bucket);
    // Keys are few (one per API key), but revoked ones linger: drop buckets that have refilled, which equal new ones.
    if (this.#buckets.size > 10_000) {
      for (const [k, b] of this.#buckets) {
        if (b.tokens + ((now - b.at) * this.#rate) / 1000 >= this.#capacity) this.#buckets.delete(k);
      }
    }
  }
}
