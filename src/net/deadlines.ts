/**
 * The attempts' deadlines on one timer. AbortSignal.timeout() per attempt keeps a timer, its signal and what
 * listens to it alive for the whole timeout after the answer came, which a backlog multiplies by its rate. Here a
 * deadline is a slot of a wheel, released as
 * soon as its attempt ends, and one interval timer expires what is overdue. A slot is `resolutionMs` wide, so an
 * expiry may come up to that much late; `expired()` lets the caller judge an answer by the exact deadline.
 */

/** What a deadline ends. */
export interface Expiring {
  expire(): void;
}

export interface Deadline {
  /** True once the deadline has passed, whether or not `expire` has been called yet. */
  expired(): boolean;
  /** The attempt is over: forget its deadline. */
  release(): void;
}

export class Deadlines {
  readonly #timeoutMs: number;
  readonly #resolutionMs: number;
  readonly #slots = new Map<number, Set<Expiring>>();
  #timer: NodeJS.Timeout | null = null;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#resolutionMs = Math.min(100, Math.max(5, Math.floor(timeoutMs / 50)));
  }

  start(target: Expiring): Deadline {
    const at = performance.now() + this.#timeoutMs;
    const slot = Math.ceil(at / this.#resolutionMs);
    let set = this.#slots.get(slot);
    if (!set) {
      set = new Set();
      this.#slots.set(slot, set);
    }
    set.add(target);
    this.#timer ??= setInterval(() => this.#tick(), this.#resolutionMs).unref();
    const owner = set;
    return {
      expired: () => performance.now() >= at,
      release: () => {
        owner.delete(target);
      },
    };
  }

  #tick(): void {
    const now = performance.now() / this.#resolutionMs;
    for (const [slot, set] of this.#slots) {
      if (slot > now) continue;
      this.#slots.delete(slot);
      for (const target of set) target.expire();
    }
    if (this.#slots.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /** Aborts nothing; stops the timer (pending deadlines no longer fire). */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
