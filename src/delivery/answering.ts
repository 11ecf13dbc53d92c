/**
 * How far ahead of its cap a webhook's claims and hand-overs may run: as many attempts as its receiver answered in
 * the last half window (HOLD_MS), since at that pace they all start within half the window, well before they go
 * stale. A fast receiver is kept supplied through the main thread's busy stretches (an ingest batch takes ~10 ms; at
 * 30,000 answers/s the sender needs hundreds queued to stay busy meanwhile); a slow one is not handed claims it
 * would only give back.
 *
 * A webhook with nothing in flight, or busy within the window with no answer yet, runs at least `untried` ahead
 * (its pace may not be known yet). A receiver that hangs keeps its cap of attempts and no more: what was claimed
 * ahead for it goes stale, is given back, and is not claimed again until it answers. Hanging receivers then cannot
 * take the claims that every other webhook needs (with PostgreSQL's 8 × the cap, two of them did).
 */
export class Answering {
  readonly #windowMs: number;
  readonly #untried: number;
  readonly #answers = new Map<string, AnswerCount>();
  /** Webhooks in flight that have had no answer since they got busy, and since when. */
  readonly #busySince = new Map<string, number>();
  /** Webhooks whose last attempt timed out: not answering until one is answered, in flight or not. */
  readonly #hung = new Set<string>();
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(windowMs: number, untried: number) {
    this.#windowMs = windowMs;
    this.#untried = untried;
  }

  /** An attempt ended at `at`; a timeout is no answer. */
  ended(webhookId: string, at: number, timedOut: boolean): void {
    if (timedOut) {
      this.#hung.add(webhookId);
      return;
    }
    this.#hung.delete(webhookId);
    this.#busySince.delete(webhookId);
    let count = this.#answers.get(webhookId);
    if (!count) {
      count = new AnswerCount(this.#windowMs / 2, at);
      this.#answers.set(webhookId, count);
    }
    count.add(at);
  }

  /** The webhook's first attempt in flight: its receiver has the window to answer. */
  busy(webhookId: string, at: number): void {
    this.#busySince.set(webhookId, at);
  }

  /**
   * Nothing of the webhook is in flight any more. Its pace is kept: between claims a busy webhook's attempts can all
   * end (on PostgreSQL, a claim is a round trip), and forgetting it then kept the webhook from ever running far ahead.
   */
  idle(webhookId: string): void {
    this.#busySince.delete(webhookId);
  }

  /** Attempts the webhook may have claimed or handed over beyond its cap. */
  ahead(webhookId: string, inFlight: number, now: number): number {
    this.#forgetStale(now);
    if (this.#hung.has(webhookId)) return 0;
    const answered = this.#answers.get(webhookId)?.within(now) ?? 0;
    const since = this.#busySince.get(webhookId);
    const untried = inFlight === 0 || (since !== undefined && now - since <= this.#windowMs);
    return untried ? Math.max(this.#untried, answered) : answered;
  }

  /** Once a window, the counts of webhooks with no answer for a window go: the map holds only those answering. */
  #forgetStale(now: number): void {
    if (now - this.#sweptAt < this.#windowMs) return;
    this.#sweptAt = now;
    for (const [webhookId, count] of this.#answers)
      if (count.within(now) === 0) this.#answers.delete(webhookId);
  }
}

/**
 * Answers within the last window, counted in two fixed windows, the previous one weighted by how much of it the
 * last window still covers: exact for a steady pace, and two numbers per webhook instead of a timestamp per answer.
 */
class AnswerCount {
  readonly #windowMs: number;
  #start: number;
  #current = 0;
  #previous = 0;

  constructor(windowMs: number, at: number) {
    this.#windowMs = windowMs;
    this.#start = at;
  }

  add(at: number): void {
    this.#roll(at);
    this.#current++;
  }

  within(now: number): number {
    this.#roll(now);
    const covered = 1 - Math.min(Math.max(now - this.#start, 0), this.#windowMs) / this.#windowMs;
    return Math.floor(this.#previous * covered) + this.#current;
  }

  #roll(now: number): void {
    const elapsed = now - this.#start;
    if (elapsed < this.#windowMs) return;
    this.#previous = elapsed < 2 * this.#windowMs ? this.#current : 0;
    this.#current = 0;
    this.#start = elapsed < 2 * this.#windowMs ? this.#start + this.#windowMs : now;
  }
}
