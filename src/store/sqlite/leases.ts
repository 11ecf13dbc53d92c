/**
 * Leases of the embedded store, held in memory. One process owns a SQLite database (ProcessLock), so its leases
 * need not be written: a claim only reads, and a crash, which ends every lease anyway, leaves the deliveries due
 * for the restarted process at once. A lease still runs out after its time, as on a shared store, so that a
 * claim that was never answered (a lost promise) cannot hold its delivery forever.
 */
export interface Lease {
  delivery_id: string;
  /** The row's key: claims find due rows by it, from an index alone. */
  seq: number;
  webhook_id: string;
  token: string;
  until: number;
}

export class Leases {
  readonly #byDelivery = new Map<string, Lease>();
  readonly #byWebhook = new Map<string, Map<number, Lease>>();

  get size(): number {
    return this.#byDelivery.size;
  }

  count(webhookId: string): number {
    return this.#byWebhook.get(webhookId)?.size ?? 0;
  }

  take(lease: Lease): void {
    this.#forget(this.#byDelivery.get(lease.delivery_id));
    this.#byDelivery.set(lease.delivery_id, lease);
    let rows = this.#byWebhook.get(lease.webhook_id);
    if (!rows) {
      rows = new Map();
      this.#byWebhook.set(lease.webhook_id, rows);
    }
    rows.set(lease.seq, lease);
  }

  /** Whether the row is under a lease at `now`; one that ran out is dropped, so the row can be claimed again. */
  holds(webhookId: string, seq: number, now: number): boolean {
    const lease = this.#byWebhook.get(webhookId)?.get(seq);
    if (!lease) return false;
    if (lease.until > now) return true;
    this.#forget(lease);
    return false;
  }

  /**
   * Ends the delivery's lease if it is still the one with `token`, and returns it: only then may its holder decide
   * the delivery.
   */
  end(deliveryId: string, token: string): Lease | undefined {
    const lease = this.#byDelivery.get(deliveryId);
    if (lease?.token !== token) return undefined;
    this.#forget(lease);
    return lease;
  }

  /** A disabled webhook's attempts in flight only add to the log. */
  endAll(webhookId: string): void {
    for (const lease of this.#byWebhook.get(webhookId)?.values() ?? [])
      this.#byDelivery.delete(lease.delivery_id);
    this.#byWebhook.delete(webhookId);
  }

  /** Keys of the rows under a lease at `now`. */
  seqs(now: number): number[] {
    return [...this.#byDelivery.values()].filter((l) => l.until > now).map((l) => l.seq);
  }

  #forget(lease: Lease | undefined): void {
    if (!lease) return;
    this.#byDelivery.delete(lease.delivery_id);
    const rows = this.#byWebhook.get(lease.webhook_id);
    rows?.delete(lease.seq);
    if (rows?.size === 0) this.#byWebhook.delete(lease.webhook_id);
  }
}
