/**
 * The hand-off at ingest (records.ts, HandOffRoom), decided the same way by both adapters: one per ingest transaction,
 * asked about each delivery as it is written, so that the adapter leases the ones taken (PostgreSQL in the row it
 * writes, SQLite in memory once committed) and returns them with their event's result.
 */
import type { EventDraft, Webhook } from '../../domain/types.ts';
import type { ClaimedDelivery, HandOffRoom, IngestResult } from '../records.ts';
import { claimOf } from '../rows.ts';
import type { Settled } from '../same-turn.ts';
import type { IngestArrival } from './batch.ts';

export class HandOff {
  readonly #given: HandOffRoom | undefined;
  readonly #token: string;
  /** Per webhook, the room left in this transaction. */
  readonly #room = new Map<string, number>();
  /** Deliveries written due and not taken: someone must claim them (the adapter wakes the dispatchers). */
  left = 0;

  /** `token` is the lease of every delivery taken (a claim's, as the adapter makes them). */
  constructor(given: HandOffRoom | undefined, token: string) {
    this.#given = given;
    this.#token = token;
  }

  get leaseMs(): number {
    return this.#given?.leaseMs ?? 0;
  }

  get token(): string {
    return this.#token;
  }

  /**
   * The claim of a delivery of `e` to `webhook`, when there is room for it; null leaves it to the claims. Never
   * taken: a delivery that waits for its event's media, and one of a rate-limited webhook, whose starts the claims
   * pace.
   */
  take(e: EventDraft, webhook: Webhook, delivery_id: string, now: number): ClaimedDelivery | null {
    if (e.download != null) return null;
    const w = webhook.webhook_id;
    let room = this.#room.get(w);
    if (room === undefined) {
      room = webhook.rate_limit ? 0 : (this.#given?.room.get(w) ?? 0);
      this.#room.set(w, room);
    }
    if (room <= 0) {
      this.left++;
      return null;
    }
    this.#room.set(w, room - 1);
    // A first attempt, free to start at once.
    return claimOf(
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
      e.trace_context ?? null,
    );
  }
}

/** Gives the caller of an ingest what it handed off, through the caller's own continuation. */
export function handedOffTo(arrival: IngestArrival, settled: Settled<IngestResult[]>): void {
  const committed = arrival.handOff?.committed;
  if (!committed || !('ok' in settled)) return;
  const claims = settled.ok.flatMap((r) => r.handedOff ?? []);
  if (claims.length > 0) committed(claims);
}
