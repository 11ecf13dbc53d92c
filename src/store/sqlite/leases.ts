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

/** Where a webhook's next claim may start scanning its due rows: after the last one it looked at. */
export interface Resume {
  at: number;
  seq: number;
  /** When scanning last started from the beginning. */
  since: number;
}

export class Leases {
  readonly #byDelivery = new Map<string, Lease>();
  readonly #byWebhook = new Map<string, Map<number, Lease>>();
  /**
   * Claims take due rows in index order (due time, then key), so the rows before the last one a claim looked at
   * are held: the next claim starts after it instead of stepping over them again. Dropped when a row may sit
   * before it unheld (a lease ended without an outcome), when a scan reaches the end of the range, and once a
   * lease's time has passed since scanning last started from the beginning, which is how a lease that ran out
   * unnoticed before it is found.
   */
  readonly #resume = new Map<string, Resume>();

  resumeAt(webhookId: string, now: number, leaseMs: number): Resume | undefined {
    const r = this.#resume.get(webhookId);
    if (r && now - r.since < leaseMs) return r;
    this.#resume.delete(webhookId);
    return undefined;
  }

  lookedUpTo(webhookId: string, at: number, seq: number, now: number): void {
    const since = this.#resume.get(webhookId)?.since ?? now;
    this.#resume.set(webhookId, { at, seq, since });
  }

  restart(webhookId: string): void {
    this.#resume.delete(webhookId);
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

  /** Ends the lease with no outcome written: the row stays where it was, due, so claims look from the start. */
  release(deliveryId: string, token: string): Lease | undefined {
    const lease = this.end(deliveryId, token);
    if (lease) this.restart(lease.webhook_id);
    return lease;
  }

  /** A disabled webhook's attempts in flight only add to the log. */
  endAll(webhookId: string): void {
    for (const lease of this.#byWebhook.get(webhookId)?.values() ?? [])
      this.#byDelivery.delete(lease.delivery_id);
    this.#byWebhook.delete(webhookId);
    this.restart(webhookId);
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
