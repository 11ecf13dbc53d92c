/**
 * A webhook's receiver's pace, which bounds how far its claims run ahead of its cap: as many as it answered in the
 * last half window, so that all start within half the window. Not known yet (nothing in flight, or no answer yet
 * within the window), it runs `untried` ahead; a receiver that hangs runs nothing ahead, so hanging receivers
 * cannot take the claims every other webhook needs.
 */
export class ReceiverPace {
  readonly #windowMs: number;
  readonly #untried: number;
  #answers: AnswerCount | null = null;
  /** Since when it has been in flight with no answer, or null. */
  #busySince: number | null = null;
  /** Its last attempt timed out: not answering until one is answered. */
  #hung = false;

  constructor(windowMs: number, untried: number) {
    this.#windowMs = windowMs;
    this.#untried = untried;
  }

  /** An attempt ended at `at`; a timeout is no answer. */
  ended(at: number, timedOut: boolean): void {
    this.#hung = timedOut;
    if (timedOut) return;
    this.#busySince = null;
    this.#answers ??= new AnswerCount(this.#windowMs / 2, at);
    this.#answers.add(at);
  }

  /** Its first attempt in flight: the receiver has the window to answer. */
  busy(at: number): void {
    this.#busySince = at;
  }

  /** Nothing in flight any more; the pace is kept (on PostgreSQL every attempt can end between two claims). */
  idle(): void {
    this.#busySince = null;
  }

  /** Attempts it may have claimed beyond its cap, with `inFlight` of its claims outstanding. */
  ahead(inFlight: number, now: number): number {
    if (this.#hung) return 0;
    const answered = this.#answers?.within(now) ?? 0;
    const since = this.#busySince;
    const untried = inFlight === 0 || (since !== null && now - since <= this.#windowMs);
    return untried ? Math.max(this.#untried, answered) : answered;
  }

  /** Nothing it says could differ from a pace never seen: it may be forgotten. */
  forgettable(now: number): boolean {
    return !this.#hung && this.#busySince === null && (this.#answers?.within(now) ?? 0) === 0;
  }
}

/** Answers within the last window: two fixed windows, the previous weighted by how much of it still counts. */
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
