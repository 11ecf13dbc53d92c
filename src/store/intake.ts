/**
 * Fresh deliveries handed to the dispatcher at ingest (store.ts, Intake), decided the same way by both adapters:
 * one HandOff per ingest transaction, asked about each delivery as it is written, so that the adapter leases the
 * taken ones (PostgreSQL in the row it writes, SQLite in memory once committed). The intake is given the claims only
 * once the transaction has committed (`deliver`).
 */
import type { EventDraft, Webhook } from '../domain/types.ts';
import { claimOf } from './rows.ts';
import type { ClaimedDelivery, Intake } from './store.ts';

export class HandOff {
  readonly #intake: Intake | null;
  readonly #token: string;
  /** Per webhook, what the intake still takes in this transaction. */
  readonly #room = new Map<string, number>();
  readonly claims: ClaimedDelivery[] = [];
  /** Deliveries written due and not taken: someone must claim them (the adapter wakes the dispatchers). */
  left = 0;

  /** `token` is the lease of every delivery taken (a claim's, as the adapter makes them). */
  constructor(intake: Intake | null, token: string) {
    this.#intake = intake;
    this.#token = token;
  }

  get leaseMs(): number {
    return this.#intake?.leaseMs ?? 0;
  }

  get token(): string {
    return this.#token;
  }

  /**
   * The claim of a delivery of `e` to `webhook`, when the intake takes it; null leaves it to the claims. Never taken:
   * a delivery that waits for its event's media, and one of a rate-limited webhook, whose starts the claims pace.
   */
  offer(e: EventDraft, webhook: Webhook, delivery_id: string, now: number): ClaimedDelivery | null {
    if (e.download != null) return null;
    const w = webhook.webhook_id;
    let room = this.#room.get(w);
    if (room === undefined) {
      room = this.#intake && !webhook.rate_limit ? this.#intake.room(w, now) : 0;
      this.#room.set(w, room);
    }
    if (room <= 0) {
      this.left++;
      return null;
    }
    this.#room.set(w, room - 1);
    // A first attempt, free to start at once: a rate-limited webhook's deliveries are never taken here.
    const claim = claimOf(
      webhook,
      now,
      this.#token,
      0,
      delivery_id,
      e.event_id,
      e.instance_id,
      0,
      0,
      'scheduled',
      e.body,
    );
    this.claims.push(claim);
    return claim;
  }

  /** After the commit: the intake gets what it took. */
  deliver(): void {
    if (this.claims.length > 0) this.#intake?.take(this.claims);
  }
}
