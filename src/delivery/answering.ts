/**
 * Which webhooks' receivers are answering. Claims and hand-overs run ahead of a webhook's cap only for a webhook
 * that got an answer (or got busy) within the window, or that has nothing in flight and did not time out last.
 * A receiver that hangs keeps its cap of attempts and no more: what was claimed ahead for it goes stale, is given
 * back, and is not claimed again until it answers. Hanging receivers then cannot take the claims that every other
 * webhook needs (with PostgreSQL's 8 × the cap, two of them did).
 */
export class Answering {
  readonly #windowMs: number;
  readonly #lastAt = new Map<string, number>();
  /** Webhooks whose last attempt timed out: not answering until one is answered, in flight or not. */
  readonly #hung = new Set<string>();

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** An attempt ended at `at`; a timeout is no answer. */
  ended(webhookId: string, at: number, timedOut: boolean): void {
    if (timedOut) {
      this.#hung.add(webhookId);
      return;
    }
    this.#hung.delete(webhookId);
    this.#lastAt.set(webhookId, at);
  }

  /** The webhook's first attempt in flight: its receiver has the window to answer, as if it just had. */
  busy(webhookId: string, at: number): void {
    this.#lastAt.set(webhookId, at);
  }

  /** Nothing of the webhook is in flight any more. */
  idle(webhookId: string): void {
    this.#lastAt.delete(webhookId);
  }

  lately(webhookId: string, inFlight: number, now: number): boolean {
    if (this.#hung.has(webhookId)) return false;
    if (inFlight === 0) return true;
    const at = this.#lastAt.get(webhookId);
    return at !== undefined && now - at <= this.#windowMs;
  }
}
