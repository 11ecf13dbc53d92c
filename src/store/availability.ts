/**
 * "The database is unavailable", known in one place. Every store call goes through `guardStore`: a failure the
 * adapter recognises as the database's own (a connection cut or refused, a full disk) becomes a StoreUnavailable,
 * which the API answers with 503 and Retry-After, and marks the store down. /readyz reads the mark: down, it is
 * not ready until no call has failed for SETTLE_MS and the database then takes a write (a probe it makes itself, so
 * readiness comes back without any traffic); up, it only checks that the database answers.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { StoreUnavailable } from './errors.ts';
import type { Store } from './ports.ts';

/** The adapter's reading of an error: the reason when it is the database's own failure, else null. */
export type Unavailable = (err: unknown) => string | null;

export type Readiness = { ready: true } | { ready: false; reason: string; since: number };

/**
 * How long after the last failed call the store stays not ready. A tiny probe write can still fit on a disk where
 * an event no longer does (SQLite's last page has room for a setting, not for an event with its deliveries), so a
 * probe that succeeds right after a failure says little; waiting also keeps readiness from flapping.
 */
export const SETTLE_MS = 2000;

export class Availability {
  readonly #probe: (write: boolean) => Promise<void>;
  readonly #clock: Clock;
  readonly #logger: Logger | null;
  #down: { reason: string; since: number } | null = null;
  #lastFailure = 0;

  constructor(probe: (write: boolean) => Promise<void>, clock: Clock, logger: Logger | null) {
    this.#probe = probe;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** Why the store is down and since when, or null. */
  get down(): { reason: string; since: number } | null {
    return this.#down;
  }

  /** A call failed for a reason of the database: logged once per outage, with the database's own error. */
  markDown(reason: string, err: unknown): void {
    this.#lastFailure = this.#clock();
    if (this.#down) return;
    this.#down = { reason, since: this.#lastFailure };
    this.#logger?.error({ err }, `database unavailable: ${reason}; requests get 503 until it is back`);
  }

  /** For /readyz: probes the database (with a write while it is down) and says whether Herald can take work. */
  async check(): Promise<Readiness> {
    const down = this.#down;
    if (down && this.#clock() - this.#lastFailure < SETTLE_MS) return { ready: false, ...down };
    try {
      await this.#probe(down !== null);
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
      // The probe's failure has marked the store down (guardStore), if it was not already.
      return { ready: false, reason: err.reason, since: this.#down?.since ?? this.#clock() };
    }
    if (down && this.#down === down) {
      this.#down = null;
      this.#logger?.warn(`database available again after ${this.#clock() - down.since} ms`);
    }
    return { ready: true };
  }
}

/**
 * The store as the rest of Herald sees it: every part's methods' failures read by `unavailable`; the database's own
 * ones thrown as StoreUnavailable (the original as its cause) and reported to the returned Availability.
 */
export function guardStore(
  store: Store,
  unavailable: Unavailable,
  clock: Clock,
  logger: Logger | null,
): { store: Store; availability: Availability } {
  const fail = (err: unknown): never => {
    const reason = err instanceof StoreUnavailable ? err.reason : unavailable(err);
    if (reason === null) throw err;
    availability.markDown(reason, err);
    throw err instanceof StoreUnavailable ? err : new StoreUnavailable(reason, { cause: err });
  };
  type Method = (...args: never[]) => unknown;
  const call = <M extends Method>(fn: M, self: unknown): M =>
    ((...args: never[]) => {
      try {
        const result = fn.apply(self, args);
        return result instanceof Promise ? result.catch(fail) : result;
      } catch (err) {
        return fail(err);
      }
    }) as M;
  const guard = <P extends object>(part: P): P =>
    new Proxy(part, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? call(value as Method, target) : value;
      },
    });
  const guarded: Store = {
    catalog: guard(store.catalog),
    webhooks: guard(store.webhooks),
    health: guard(store.health),
    events: guard(store.events),
    claims: guard(store.claims),
    outcomes: guard(store.outcomes),
    mediaJobs: guard(store.mediaJobs),
    retention: guard(store.retention),
    log: guard(store.log),
    engineRepeats: guard(store.engineRepeats),
    lidPhones: guard(store.lidPhones),
    portalLinks: guard(store.portalLinks),
    sources: guard(store.sources),
    listenForWork: call(store.listenForWork, store),
    ping: call(store.ping, store),
    close: () => store.close(),
  };
  const availability = new Availability((write) => guarded.ping({ write }), clock, logger);
  return { store: guarded, availability };
}
