/**
 * When a finishing attempt should make the dispatcher claim its webhook again: once half of what the webhook may
 * have claimed ahead of its cap is gone, so that claims come in batches (each passes over the leases already
 * held), and not at all after a claim that got less than it asked for — nothing more of that webhook was due —
 * until new work is queued (ingest, redelivery) or the dispatcher's timer finds a retry due.
 */
import type { ClaimedDelivery } from '../store/store.ts';

export class Refill {
  /** What the claim in progress asked of each webhook. */
  readonly #asked = new Map<string, number>();
  readonly #drained = new Set<string>();

  /** A claim starts. */
  begin(): void {
    this.#asked.clear();
  }

  ask(webhookId: string, room: number): void {
    this.#asked.set(webhookId, room);
  }

  /**
   * The claim's result: a webhook that got less than it asked for has nothing more due — unless the claim took all
   * it was allowed (`full`), which may have stopped it short of the webhook's room.
   */
  got(claims: readonly ClaimedDelivery[], full: boolean): void {
    const got = new Map<string, number>();
    for (const c of claims) got.set(c.webhook_id, (got.get(c.webhook_id) ?? 0) + 1);
    for (const [webhookId, asked] of this.#asked) {
      if (asked <= 0) continue;
      if ((got.get(webhookId) ?? 0) >= asked) this.#drained.delete(webhookId);
      else if (!full) this.#drained.add(webhookId);
    }
  }

  /** New work was queued: any webhook may have some due. */
  newWork(): void {
    this.#drained.clear();
  }

  /** `waiting`: the webhook's claims not yet started; `ahead`: how many it may have claimed beyond its cap. */
  needed(webhookId: string, waiting: number, ahead: number): boolean {
    return waiting < Math.max(1, ahead / 2) && !this.#drained.has(webhookId);
  }
}
