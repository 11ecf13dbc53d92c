/**
 * A budget of bytes shared by requests, first come first served: `acquire(n)` resolves once n bytes are free (at
 * once when they are), with the function that gives them back. A request larger than the whole budget waits until
 * nothing else holds any, so it is never refused for its size alone.
 */
export class ByteBudget {
  readonly capacity: number;
  #used = 0;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get used(): number {
    return this.#used;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Resolves with a release function once `bytes` are held. Rejects with `signal`'s reason if it fires first; the
   * place in the queue is then given up.
   */
  acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    const release = this.#releaser(bytes);
    if (this.#waiting.length === 0 && this.#fits(bytes)) {
      this.#used += bytes;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      signal?.throwIfAborted();
      const entry = {
        bytes,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        this.#waiting.splice(this.#waiting.indexOf(entry), 1);
        // The one that left may have been what held back those behind it.
        this.#grant();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(entry);
    });
  }

  #fits(bytes: number): boolean {
    return this.#used === 0 || this.#used + bytes <= this.capacity;
  }

  #releaser(bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#used -= bytes;
      this.#grant();
    };
  }

  /** Grants waiters in order while they fit; the first that does not holds back the rest (no starving it). */
  #grant(): void {
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0].bytes)) {
      const next = this.#waiting.shift() as { bytes: number; grant: () => void };
      this.#used += next.bytes;
      next.grant();
    }
  }
}
