/**
 * Calls that arrive in the same turn of the event loop, handled together. An engine sends one request per event,
 * so 64 connections bring up to 64 single-event ingests per turn: one transaction and one flush for all of them
 * costs a fraction of 64 (the BEGIN/COMMIT, the webhooks read, the wake-up of the dispatcher are shared).
 */
export type Settled<R> = { ok: R } | { error: unknown };

export class SameTurn<A, R> {
  readonly #run: (args: A[]) => Promise<Settled<R>[]>;
  #waiting: { arg: A; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];

  /** `run` answers each argument in order; a rejection of `run` itself fails every call of the turn. */
  constructor(run: (args: A[]) => Promise<Settled<R>[]>) {
    this.#run = run;
  }

  call(arg: A): Promise<R> {
    return new Promise((resolve, reject) => {
      // setImmediate runs after the poll phase: every request read in this turn has been handled by then.
      if (this.#waiting.push({ arg, resolve, reject }) === 1) setImmediate(() => void this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const calls = this.#waiting;
    this.#waiting = [];
    try {
      const settled = await this.#run(calls.map((c) => c.arg));
      for (const [i, s] of settled.entries()) {
        if ('ok' in s) calls[i].resolve(s.ok);
        else calls[i].reject(s.error);
      }
    } catch (err) {
      for (const c of calls) c.reject(err);
    }
  }
}
