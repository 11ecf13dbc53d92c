/**
 * Deliveries claimed ahead of their attempt, per webhook, oldest first. A dispatcher that holds the next claims of
 * a busy webhook starts the next attempt the moment one finishes, instead of waiting a store round trip for it;
 * the next claim is made while those attempts run.
 *
 * A held claim goes stale after a short while: its lease was sized for one attempt (timeout + margin), so it must
 * start soon after the claim or be given back.
 */
import type { ClaimedDelivery } from '../store/store.ts';

export interface Held {
  claim: ClaimedDelivery;
  /** Last moment the attempt may start within the lease's margin. */
  startBy: number;
}

export class HeldClaims {
  readonly #byWebhook = new Map<string, Held[]>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  count(webhookId: string): number {
    return this.#byWebhook.get(webhookId)?.length ?? 0;
  }

  add(claim: ClaimedDelivery, startBy: number): void {
    const queue = this.#byWebhook.get(claim.webhook_id);
    if (queue) queue.push({ claim, startBy });
    else this.#byWebhook.set(claim.webhook_id, [{ claim, startBy }]);
    this.#size++;
  }

  /** The webhook's oldest claim still startable at `now`; stale ones found before it are moved to `stale`. */
  take(webhookId: string, now: number, stale: ClaimedDelivery[]): Held | undefined {
    const queue = this.#byWebhook.get(webhookId);
    while (queue && queue.length > 0) {
      const held = queue.shift() as Held;
      this.#size--;
      if (queue.length === 0) this.#byWebhook.delete(webhookId);
      if (held.startBy >= now) return held;
      stale.push(held.claim);
    }
    return undefined;
  }

  /** Removes every held claim whose time to start has passed, of every webhook, and returns them. */
  sweep(now: number): ClaimedDelivery[] {
    const stale: ClaimedDelivery[] = [];
    for (const [webhookId, queue] of this.#byWebhook) {
      // Oldest first: claims are added in the order they were made, each with its claim time + the same hold.
      while (queue.length > 0 && queue[0].startBy < now) {
        stale.push((queue.shift() as Held).claim);
        this.#size--;
      }
      if (queue.length === 0) this.#byWebhook.delete(webhookId);
    }
    return stale;
  }

  webhooks(): IterableIterator<string> {
    return this.#byWebhook.keys();
  }

  /** Every held claim, removed: at stop they are given back unattempted. */
  drain(): ClaimedDelivery[] {
    const all = [...this.#byWebhook.values()].flatMap((queue) => queue.map((h) => h.claim));
    this.#byWebhook.clear();
    this.#size = 0;
    return all;
  }
}
