/**
 * One connection per broker address and process, shared by every source consuming there: opened by the first,
 * closed with the last. Each broker's client reconnects on its own.
 */
export class SharedLinks<C> {
  readonly #links = new Map<string, { ready: Promise<C>; users: number }>();
  readonly #close: (c: C) => Promise<void>;

  constructor(close: (c: C) => Promise<void>) {
    this.#close = close;
  }

  /** The address's connection (opened if none); `release` once the caller is done with it. */
  async acquire(key: string, open: () => Promise<C>): Promise<C> {
    let link = this.#links.get(key);
    if (!link) {
      link = { ready: open(), users: 0 };
      const made = link;
      this.#links.set(key, made);
      made.ready.catch(() => {
        if (this.#links.get(key) === made) this.#links.delete(key);
      });
    }
    link.users++;
    try {
      return await link.ready;
    } catch (err) {
      link.users--;
      throw err;
    }
  }

  async release(key: string): Promise<void> {
    const link = this.#links.get(key);
    if (!link || --link.users > 0) return;
    this.#links.delete(key);
    const c = await link.ready.catch(() => null);
    if (c) await this.#close(c).catch(() => {});
  }

  get size(): number {
    return this.#links.size;
  }
}
