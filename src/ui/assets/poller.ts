/**
 * The page keeps itself current by short polling of the public API: every few seconds while the tab is visible,
 * at once when it becomes visible again, never two refreshes at a time.
 */
export class Poller {
  static readonly #all = new Set<Poller>();

  /** Stops every poller of the page (sign-out, a refused key): nothing asks the API without a key. */
  static stopAll(): void {
    for (const p of Poller.#all) p.stop();
  }

  readonly #refresh: () => Promise<void>;
  readonly #intervalMs: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(refresh: () => Promise<void>, intervalMs = 3000) {
    this.#refresh = refresh;
    this.#intervalMs = intervalMs;
    document.addEventListener('visibilitychange', this.#onVisibility);
    Poller.#all.add(this);
  }

  #onVisibility = () => {
    if (document.visibilityState === 'visible') void this.now();
  };

  /** Refreshes now (or joins the refresh under way), then waits a full interval before the next. */
  now(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running) return this.#running;
    clearTimeout(this.#timer);
    this.#running = this.#refresh()
      .catch(() => {}) // each panel shows its own error; the next tick tries again
      .finally(() => {
        this.#running = null;
        if (!this.#stopped && document.visibilityState === 'visible') {
          this.#timer = setTimeout(() => void this.now(), this.#intervalMs);
        }
      });
    return this.#running;
  }

  stop(): void {
    this.#stopped = true;
    Poller.#all.delete(this);
    clearTimeout(this.#timer);
    document.removeEventListener('visibilitychange', this.#onVisibility);
  }
}
