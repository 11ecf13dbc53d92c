/**
 * At most one connection per broker address (brokerAddressKey), shared by every webhook that publishes there:
 * opened on first use, reused, closed after an idle period with no publish. A failed open is not retried at
 * every attempt: the address backs off (exponentially, capped) and attempts fail at once with the last error until
 * the next try is due, so a broker that is down is not hammered by every delivery. Once open, a connection's own
 * client reconnects (each adapter gives it the same capped backoff); when a client gives up, the adapter calls
 * `lost` and the next attempt opens a new one.
 */

export interface Backoff {
  /** The first wait after a failure, doubled (with jitter) at each further one. */
  firstMs: number;
  maxMs: number;
}

export interface PoolOptions {
  /** Close a connection no publish has used for this long; default 60 s. */
  idleMs?: number;
  /** Waits between attempts to (re)connect; default 250 ms doubling up to 10 s. */
  backoff?: Backoff;
}

export const DEFAULT_BACKOFF: Backoff = { firstMs: 250, maxMs: 10_000 };

/** The wait before try number `attempt` (0-based): doubling, capped, with up to 25% jitter against stampedes. */
export function backoffDelay(b: Backoff, attempt: number): number {
  const base = Math.min(b.maxMs, b.firstMs * 2 ** Math.min(attempt, 30));
  return Math.round(base * (0.75 + Math.random() * 0.25));
}

export interface Connector<T, C> {
  /** Opens a connection, settling once it is usable (or failed); `lost` reports a client that gave up. */
  open(target: T, lost: (err: unknown) => void): Promise<C>;
  close(connection: C): Promise<void>;
}

/** Thrown while an address backs off after a failed open: `cause` is that failure. */
export class BackingOff extends Error {
  readonly retryInMs: number;
  constructor(cause: unknown, retryInMs: number) {
    super(`backing off for ${retryInMs} ms`, { cause });
    this.retryInMs = retryInMs;
  }
}

export class PoolClosed extends Error {
  constructor() {
    super('the publisher is closed');
  }
}

interface Entry<C> {
  ready: Promise<C>;
  users: number;
  idle: NodeJS.Timeout | null;
}

export class ConnectionPool<T, C> {
  readonly #connector: Connector<T, C>;
  readonly #idleMs: number;
  readonly backoff: Backoff;
  readonly #entries = new Map<string, Entry<C>>();
  readonly #failures = new Map<string, { count: number; retryAt: number; error: unknown }>();
  #opened = 0;
  #closed = false;

  constructor(connector: Connector<T, C>, options: PoolOptions = {}) {
    this.#connector = connector;
    this.#idleMs = options.idleMs ?? 60_000;
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
  }

  /** Connections open or opening now. */
  get size(): number {
    return this.#entries.size;
  }

  /** Connections successfully opened since the pool was made (reuse keeps this at one per address). */
  get opened(): number {
    return this.#opened;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  /** Runs `work` on the address's connection, opening it first if needed. */
  async use<R>(key: string, target: T, work: (connection: C) => Promise<R>): Promise<R> {
    if (this.#closed) throw new PoolClosed();
    const entry = this.#entries.get(key) ?? this.#open(key, target);
    entry.users++;
    if (entry.idle) clearTimeout(entry.idle);
    entry.idle = null;
    try {
      return await work(await entry.ready);
    } finally {
      entry.users--;
      if (entry.users === 0 && this.#entries.get(key) === entry) this.#idleLater(key, entry);
    }
  }

  #open(key: string, target: T): Entry<C> {
    const failure = this.#failures.get(key);
    const wait = failure ? failure.retryAt - Date.now() : 0;
    if (failure && wait > 0) throw new BackingOff(failure.error, wait);
    let connection: C | null = null;
    const lost = (err: unknown) => {
      if (this.#entries.get(key) !== entry) return;
      this.#drop(key, entry, err);
      if (connection) void this.#connector.close(connection).catch(() => {});
    };
    const entry: Entry<C> = {
      ready: this.#connector.open(target, lost).then(
        (c) => {
          connection = c;
          this.#opened++;
          this.#failures.delete(key);
          // Closed (or dropped) while it opened: nobody will use it.
          if (this.#entries.get(key) !== entry) void this.#connector.close(c).catch(() => {});
          return c;
        },
        (err) => {
          if (this.#entries.get(key) === entry) this.#drop(key, entry, err);
          throw err;
        },
      ),
      users: 0,
      idle: null,
    };
    entry.ready.catch(() => {}); // its users see the error; nobody else must
    this.#entries.set(key, entry);
    return entry;
  }

  #drop(key: string, entry: Entry<C>, err: unknown): void {
    this.#entries.delete(key);
    if (entry.idle) clearTimeout(entry.idle);
    const count = (this.#failures.get(key)?.count ?? 0) + 1;
    this.#failures.set(key, {
      count,
      retryAt: Date.now() + backoffDelay(this.backoff, count - 1),
      error: err,
    });
  }

  #idleLater(key: string, entry: Entry<C>): void {
    entry.idle = setTimeout(() => {
      if (entry.users > 0 || this.#entries.get(key) !== entry) return;
      this.#entries.delete(key);
      void entry.ready.then((c) => this.#connector.close(c)).catch(() => {});
    }, this.#idleMs);
    entry.idle.unref(); // an idle connection never keeps the process alive
  }

  /** Closes every connection; uses after this fail with PoolClosed. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    this.#failures.clear();
    await Promise.all(
      entries.map(async (entry) => {
        if (entry.idle) clearTimeout(entry.idle);
        const c = await entry.ready.catch(() => null);
        if (c) await this.#connector.close(c).catch(() => {});
      }),
    );
  }
}
