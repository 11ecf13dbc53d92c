/**
 * The sender thread's own per-webhook cap. The dispatcher hands a busy webhook's next requests over before its
 * attempts in flight finish; they wait here and the thread starts the next one the moment one of that webhook's
 * requests ends, without a round trip through the main thread (two thread hops and, under load, a wait behind
 * the store's transactions: half of an attempt's cycle at full rate). A waiting request found past its deadline
 * when a slot frees — the held claim's, so that its lease keeps its margin — is handed back unstarted. Found then,
 * not by a timer: a hanging receiver's waiting requests would otherwise go back, be claimed and be handed over
 * again every second, for nothing until one of its attempts ends.
 */

/** What the dispatcher tells the sender about a request besides the request itself. */
export interface SendSlot {
  /** Requests of this webhook that may run at once (its cap, less the other processes' leases). */
  limit: number;
  /** The caller's clock: the last moment the request may start. */
  startBy: number;
}

interface Waiting<T> {
  item: T;
  startBy: number;
}

export class StartQueue<T> {
  readonly #running = new Map<string, number>();
  readonly #limits = new Map<string, number>();
  readonly #waiting = new Map<string, Waiting<T>[]>();

  /** True when the request may start now (it counts as running); otherwise it waits for `finished`. */
  admit(webhookId: string, limit: number, startBy: number, item: T): boolean {
    this.#limits.set(webhookId, limit);
    const queue = this.#waiting.get(webhookId);
    if (!queue && this.#runningOf(webhookId) < limit) {
      this.#running.set(webhookId, this.#runningOf(webhookId) + 1);
      return true;
    }
    const waiting = { item, startBy };
    if (queue) queue.push(waiting);
    else this.#waiting.set(webhookId, [waiting]);
    return false;
  }

  /**
   * One of the webhook's requests ended: the waiting ones it may start now, oldest first (each counts as
   * running); those past their deadline found on the way are moved to `expired`.
   */
  finished(webhookId: string, now: number, expired: T[]): T[] {
    const left = this.#runningOf(webhookId) - 1;
    if (left > 0) this.#running.set(webhookId, left);
    else this.#running.delete(webhookId);
    const started: T[] = [];
    const queue = this.#waiting.get(webhookId);
    const limit = this.#limits.get(webhookId) ?? 1;
    while (queue && queue.length > 0 && this.#runningOf(webhookId) < limit) {
      const next = this.#take(webhookId, queue);
      if (next.startBy < now) {
        expired.push(next.item);
        continue;
      }
      this.#running.set(webhookId, this.#runningOf(webhookId) + 1);
      started.push(next.item);
    }
    if (!this.#waiting.has(webhookId) && !this.#running.has(webhookId)) this.#limits.delete(webhookId);
    return started;
  }

  /** Every waiting request, removed (a stop: they are handed back unstarted). */
  drain(): T[] {
    const all = [...this.#waiting.values()].flatMap((queue) => queue.map((w) => w.item));
    this.#waiting.clear();
    return all;
  }

  #runningOf(webhookId: string): number {
    return this.#running.get(webhookId) ?? 0;
  }

  #take(webhookId: string, queue: Waiting<T>[]): Waiting<T> {
    const next = queue.shift() as Waiting<T>;
    if (queue.length === 0) this.#waiting.delete(webhookId);
    return next;
  }
}
