/** Remembers processed event ids so a receiver can ignore redeliveries of the same event. */
export interface DedupeStore {
  /** true when id was not seen before (and records it) */
  firstSeen(eventId: string): boolean | Promise<boolean>;
  /**
   * Drops a recorded id: called when handling the event failed after firstSeen recorded it, so that Herald's
   * retry of the same event is processed instead of being ignored as a duplicate.
   */
  forget(eventId: string): void | Promise<void>;
}

export interface MemoryDedupeOptions {
  /** Most ids remembered; the least recently seen is dropped beyond this. Default 10000. */
  max?: number;
  /** How long an id is remembered after it was first recorded. Default 24h. */
  ttlMs?: number;
  /** Clock in epoch milliseconds; default Date.now. */
  now?: () => number;
}

/**
 * In-process, bounded LRU with TTL. Lost on restart and not shared between processes,
 * so use a shared DedupeStore when several receiver instances serve one endpoint.
 */
export class MemoryDedupe implements DedupeStore {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** eventId -> expiry (ms). Map iteration order is the LRU order: first key is least recently seen. */
  readonly #entries = new Map<string, number>();

  constructor(opts: MemoryDedupeOptions = {}) {
    const max = opts.max ?? 10_000;
    const ttlMs = opts.ttlMs ?? 24 * 60 * 60 * 1000;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError('MemoryDedupe: max must be a positive integer');
    if (!(ttlMs > 0)) throw new RangeError('MemoryDedupe: ttlMs must be positive');
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#now = opts.now ?? Date.now;
  }

  firstSeen(eventId: string): boolean {
    const now = this.#now();
    this.#sweep(now);
    const expiresAt = this.#entries.get(eventId);
    this.#entries.delete(eventId);
    if (expiresAt !== undefined && expiresAt > now) {
      // Re-insert to mark it most recently used, keeping the original expiry so
      // repeated redeliveries cannot keep an id alive forever.
      this.#entries.set(eventId, expiresAt);
      return false;
    }
    this.#entries.set(eventId, now + this.#ttlMs);
    if (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return true;
  }

  forget(eventId: string): void {
    this.#entries.delete(eventId);
  }

  /**
   * Drops expired ids from the LRU end. Stops at the first live one, so it stays cheap; ids
   * that expired after being bumped are caught by the expiry check in firstSeen or by eviction.
   */
  #sweep(now: number): void {
    for (const [id, expiresAt] of this.#entries) {
      if (expiresAt > now) return;
      this.#entries.delete(id);
    }
  }
}
