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
    this.#expire(webhookId, now, stale);
    const queue = this.#byWebhook.get(webhookId);
    const held = queue?.shift();
    if (!queue || !held) return undefined;
    this.#size--;
    if (queue.length === 0) this.#byWebhook.delete(webhookId);
    return held;
  }

  /** Removes every held claim whose time to start has passed, of every webhook, and returns them. */
  sweep(now: number): ClaimedDelivery[] {
    const stale: ClaimedDelivery[] = [];
    for (const webhookId of [...this.#byWebhook.keys()]) this.#expire(webhookId, now, stale);
    return stale;
  }

  /** Moves the webhook's claims past their time to start to `stale`: the oldest come first, each with the same hold. */
  #expire(webhookId: string, now: number, stale: ClaimedDelivery[]): void {
    const queue = this.#byWebhook.get(webhookId);
    if (!queue) return;
    while (queue.length > 0 && queue[0].startBy < now) {
      stale.push((queue.shift() as Held).claim);
      this.#size--;
    }
    if (queue.length === 0) this.#byWebhook.delete(webhookId);
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
