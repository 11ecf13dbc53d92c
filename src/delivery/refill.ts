/**
 * When a finishing attempt should make the dispatcher claim its webhook again: once half of the webhook's held
 * claims are gone, so that claims come in batches (each passes over the leases already held), and not at all
 * after a claim that got less than it asked for — nothing more of that webhook was due — until new work is queued
 * (ingest, redelivery) or the dispatcher's timer finds a retry due.
 */
import type { ClaimedDelivery } from '../store/store.ts';

export class Refill {
  /** Held claims of a webhook below which it is claimed again. */
  readonly #below: number;
  /** What the claim in progress asked of each webhook. */
  readonly #asked = new Map<string, number>();
  readonly #drained = new Set<string>();

  constructor(cap: number, claimAhead: number) {
    this.#below = Math.max(1, ((claimAhead - 1) * cap) / 2);
  }

  /** A claim starts. */
  begin(): void {
    this.#asked.clear();
  }

  ask(webhookId: string, room: number): void {
    this.#asked.set(webhookId, room);
  }

  /** The claim's result: a webhook that got less than it asked for has nothing more due. */
  got(claims: readonly ClaimedDelivery[]): void {
    const got = new Map<string, number>();
    for (const c of claims) got.set(c.webhook_id, (got.get(c.webhook_id) ?? 0) + 1);
    for (const [webhookId, asked] of this.#asked) {
      if (asked <= 0) continue;
      if ((got.get(webhookId) ?? 0) < asked) this.#drained.add(webhookId);
      else this.#drained.delete(webhookId);
    }
  }

  /** New work was queued: any webhook may have some due. */
  newWork(): void {
    this.#drained.clear();
  }

  needed(webhookId: string, held: number): boolean {
    return held < this.#below && !this.#drained.has(webhookId);
  }
}
