/**
 * A clock for Herald that runs at real speed but can be moved to a chosen hour, so a test places attempts in known
 * UTC hours and their answer times stay real. `at(i)` moves it to 10 minutes into hour `first + i`.
 */
import { HOUR_MS } from '../../src/domain/health.ts';

export class HourClock {
  /** The test's first hour (a UTC hour's start). */
  readonly first: number;
  #skew = 0;
  readonly now = (): number => Date.now() + this.#skew;

  constructor(first: number) {
    this.first = first;
  }

  /** The start of hour `first + i`. */
  hour(i: number): number {
    return this.first + i * HOUR_MS;
  }

  /** Moves the clock to 10 minutes into hour `first + i`; `moved` runs after (a dispatcher to wake). */
  at(i: number, moved?: () => void): void {
    this.#skew = this.hour(i) + 10 * 60_000 - Date.now();
    moved?.();
  }
}

/** The start of the current UTC hour, `offset` hours on. */
export const hourFromNow = (offset: number): number =>
  Math.floor(Date.now() / HOUR_MS) * HOUR_MS + offset * HOUR_MS;
