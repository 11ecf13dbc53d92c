/**
 * A loop's sleep that a wake-up ends early. A wake-up that comes while the loop is busy is remembered until the
 * next round begins, so none is lost between a loop's check for work and its sleep.
 */
export class Wakeup {
  #woken = false;
  #wake: (() => void) | null = null;

  /** Call at the start of each round: wake-ups before it are answered by that round. */
  begin(): void {
    this.#woken = false;
  }

  /** Whether a wake-up came since begin(): the sleep would end at once, so the loop need not work out its length. */
  get woken(): boolean {
    return this.#woken;
  }

  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Resolves after `ms`, or at the first wake-up (at once if one came since begin()). */
  sleep(ms: number): Promise<void> {
    if (this.#woken) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
