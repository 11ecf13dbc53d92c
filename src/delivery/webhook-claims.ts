/**
 * What the dispatcher keeps of each webhook while it has claims out or a pace worth remembering: its claims out, the
 * other processes' leases, its pace, and whether its last claim drained it. From these come how much of it to claim
 * (its share of the cap, and what may run ahead of it) and how many fresh deliveries ingest may hand off to it.
 */
import type { ClaimedDelivery } from '../store/records.ts';
import { ReceiverPace } from './receiver-pace.ts';

export interface WebhookState {
  /** Claims handed to the sender and not yet back. */
  out: number;
  /** The other processes' leases, seen at the last claim: this process's share of the cap is the rest. */
  others: number;
  pace: ReceiverPace;
}

export interface ClaimLimits {
  maxInFlight: number;
  maxInFlightPerWebhook: number;
  /** A webhook's claims out at most, as a multiple of its cap, when its receiver's pace allows. */
  ahead: number;
  /** How long a claim may wait in its lane (dispatcher.ts, HOLD_MS): the pace's window. */
  holdMs: number;
}

export class WebhookClaims {
  readonly #limits: ClaimLimits;
  readonly #states = new Map<string, WebhookState>();
  /**
   * The webhooks whose last claim got less than it asked for, since the last wake-up: nothing more is due for them
   * until new work is queued, so they are the only ones ingest may hand fresh deliveries to.
   */
  readonly #drained = new Set<string>();
  /** Webhooks with claims out. */
  #busy = 0;
  #forgotAt = Number.NEGATIVE_INFINITY;

  constructor(limits: ClaimLimits) {
    this.#limits = limits;
  }

  get(webhookId: string): WebhookState {
    let t = this.#states.get(webhookId);
    if (!t) {
      // Its pace not known yet, a webhook runs one cap ahead: as far as a fresh burst needs.
      t = {
        out: 0,
        others: 0,
        pace: new ReceiverPace(this.#limits.holdMs, this.#limits.maxInFlightPerWebhook),
      };
      this.#states.set(webhookId, t);
    }
    return t;
  }

  /** How many more of a webhook's deliveries to lease: its share of the cap, and what may run ahead of it. */
  claimRoom(webhookId: string, others: number, now: number): number {
    const t = this.get(webhookId);
    t.others = others;
    const ahead = others === 0 ? this.aheadOf(t, now) : 0;
    return this.limit(t) + ahead - t.out;
  }

  /**
   * What ingest may hand off now: for each drained webhook that no other process holds, what a claim would take;
   * null when none may take any.
   */
  handOffRoom(now: number): Map<string, number> | null {
    if (this.#drained.size === 0) return null;
    const room = new Map<string, number>();
    for (const webhookId of this.#drained) {
      const t = this.#states.get(webhookId);
      if (!t || t.others > 0) continue;
      const n = this.limit(t) + this.aheadOf(t, now) - t.out;
      if (n > 0) room.set(webhookId, n);
    }
    return room.size > 0 ? room : null;
  }

  /** This process's share of the webhook's cap. */
  limit(t: WebhookState): number {
    return this.#limits.maxInFlightPerWebhook - t.others;
  }

  /** Claims beyond the cap; the share keeps a few fast webhooks from holding the leases that many others need. */
  aheadOf(t: WebhookState, now: number): number {
    const share = Math.floor(this.#limits.maxInFlight / Math.max(1, this.#busy));
    const most = (this.#limits.ahead - 1) * this.#limits.maxInFlightPerWebhook;
    return Math.min(most, share, t.pace.ahead(t.out, now));
  }

  drained(webhookId: string): boolean {
    return this.#drained.has(webhookId);
  }

  /** New work was queued: any webhook may have some again. */
  undrain(): void {
    this.#drained.clear();
  }

  /**
   * What a claim tells of each webhook it asked for: less than it asked for means nothing more is due, unless the
   * claim was full (it may have stopped short), or a rate limit gave it only a second's worth of slots (the rest are
   * due as its attempts end).
   */
  noteClaim(claims: ClaimedDelivery[], asked: Map<string, number>, full: boolean): void {
    const got = new Map<string, number>();
    for (const c of claims) got.set(c.webhook_id, (got.get(c.webhook_id) ?? 0) + 1);
    const paced = new Set(claims.filter((c) => c.rate_limit !== null).map((c) => c.webhook_id));
    for (const [webhookId, room] of asked) {
      if (!this.#states.has(webhookId) || room <= 0) continue;
      if ((got.get(webhookId) ?? 0) >= room || paced.has(webhookId)) this.#drained.delete(webhookId);
      else if (!full) this.#drained.add(webhookId);
    }
  }

  /** A claim goes out to the sender. */
  sent(t: WebhookState, now: number): void {
    if (t.out++ === 0) {
      this.#busy++;
      t.pace.busy(now);
    }
  }

  /** A claim came back from the sender. */
  back(t: WebhookState): void {
    if (--t.out === 0) {
      this.#busy--;
      t.pace.idle();
    }
  }

  /** Once a window, webhooks with nothing out and nothing to remember are forgotten. */
  forget(now: number): void {
    if (now - this.#forgotAt < this.#limits.holdMs) return;
    this.#forgotAt = now;
    for (const [webhookId, t] of this.#states) {
      if (t.out === 0 && !this.#drained.has(webhookId) && t.pace.forgettable(now))
        this.#states.delete(webhookId);
    }
  }

  /** Attempts that can be running per webhook (its claims out, up to its limit). */
  inFlight(): Map<string, number> {
    const running = new Map<string, number>();
    for (const [webhookId, t] of this.#states)
      if (t.out > 0) running.set(webhookId, Math.min(t.out, this.limit(t)));
    return running;
  }
}
