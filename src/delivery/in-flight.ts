/**
 * The dispatcher's count of attempts handed to the sender, per webhook and in all. A sender that queues runs at
 * most a webhook's limit at once and keeps the rest waiting, so what can run — what the process-wide cap and
 * /metrics count — is, per webhook, the attempts handed over up to its limit. Counting the waiting ones too would
 * let four hanging receivers fill the process-wide cap where eight did before.
 */
export class InFlight {
  readonly #limitOf: (webhookId: string) => number;
  readonly #handed = new Map<string, number>();
  /** Per webhook, min(handed, limit) as last counted into `running`. */
  readonly #running = new Map<string, number>();
  #handedTotal = 0;
  #runningTotal = 0;

  constructor(limitOf: (webhookId: string) => number) {
    this.#limitOf = limitOf;
  }

  /** Attempts handed over, running or waiting. */
  get handed(): number {
    return this.#handedTotal;
  }

  /** Attempts that can be running. */
  get running(): number {
    return this.#runningTotal;
  }

  /** Webhooks with attempts handed over. */
  get webhooks(): number {
    return this.#handed.size;
  }

  /** Per webhook, the attempts that can be running (read by /metrics). */
  runningByWebhook(): ReadonlyMap<string, number> {
    return this.#running;
  }

  of(webhookId: string): number {
    return this.#handed.get(webhookId) ?? 0;
  }

  add(webhookId: string): void {
    this.#handed.set(webhookId, this.of(webhookId) + 1);
    this.#handedTotal++;
    this.recount(webhookId);
  }

  remove(webhookId: string): void {
    const left = this.of(webhookId) - 1;
    if (left > 0) this.#handed.set(webhookId, left);
    else this.#handed.delete(webhookId);
    this.#handedTotal--;
    this.recount(webhookId);
  }

  /** After a change of the webhook's count or of its limit. */
  recount(webhookId: string): void {
    const n = Math.max(0, Math.min(this.of(webhookId), this.#limitOf(webhookId)));
    this.#runningTotal += n - (this.#running.get(webhookId) ?? 0);
    if (n > 0) this.#running.set(webhookId, n);
    else this.#running.delete(webhookId);
  }
}
