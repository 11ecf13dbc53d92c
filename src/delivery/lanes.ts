/**
 * Admission of attempts, in one place: per webhook a lane — a FIFO of claims, each with its window (not before
 * `startAt`, a rate limit's slot; not after `startBy`), a running count and a limit (its cap, less what other
 * processes hold) — and the process-wide cap over all lanes. A lane starts its next request the moment one of its
 * own ends; lanes held back by the process-wide cap take turns. A job past its window goes back unstarted. Pure.
 */

/**
 * A claim on its way to its attempt, one shape from the dispatcher to the lane: the dispatcher hands over
 * LaneJob<ClaimedDelivery> (thread-feed.ts), the feed passes LaneJob<Request> to its thread with the times counted from
 * the handing over (thread.ts), and the thread's lanes run it.
 */
export interface LaneJob<T> {
  webhookId: string;
  item: T;
  /** The webhook's running limit, as of this claim. */
  limit: number;
  /** Not before (a rate limit's slot); 0 for at once. */
  startAt: number;
  /** Not after: past it, the job goes back unstarted. */
  startBy: number;
  /** At least this long after the lane's previous start (a rate limit: 1000 / per_second); 0 for none. */
  gapMs: number;
}

interface Lane<T> {
  jobs: LaneJob<T>[];
  /** Index of the first job still waiting: a FIFO without shifting an array at every start. */
  head: number;
  running: number;
  limit: number;
  /** Not before this does the lane start its next job (its rate limit's spacing). */
  nextStart: number;
}

export class Lanes<T> {
  readonly #maxRunning: number;
  readonly #start: (item: T, webhookId: string) => void;
  readonly #lanes = new Map<string, Lane<T>>();
  /** Lanes with a job that could start but for the process-wide cap, in the order they were held back. */
  readonly #held = new Set<Lane<T>>();
  #running = 0;

  constructor(maxRunning: number, start: (item: T, webhookId: string) => void) {
    this.#maxRunning = maxRunning;
    this.#start = start;
  }

  /** Requests running now, in all. */
  get running(): number {
    return this.#running;
  }

  /** Claims arrive: each joins its webhook's lane, and what may start starts. Returns the jobs past their window. */
  submit(jobs: readonly LaneJob<T>[], now: number): T[] {
    const expired: T[] = [];
    const touched = new Set<Lane<T>>();
    for (const job of jobs) {
      let lane = this.#lanes.get(job.webhookId);
      if (!lane) {
        lane = { jobs: [], head: 0, running: 0, limit: job.limit, nextStart: 0 };
        this.#lanes.set(job.webhookId, lane);
      }
      lane.limit = job.limit;
      lane.jobs.push(job);
      touched.add(lane);
    }
    for (const lane of touched) this.#pump(lane, now, expired);
    return expired;
  }

  /** One of the webhook's requests ended: its lane, and lanes held back by the process-wide cap, move on. */
  finished(webhookId: string, now: number): T[] {
    const expired: T[] = [];
    const lane = this.#lanes.get(webhookId);
    if (lane) {
      lane.running--;
      this.#running--;
      this.#pump(lane, now, expired);
    }
    for (const held of this.#held) {
      if (this.#running >= this.#maxRunning) break;
      this.#held.delete(held);
      this.#pump(held, now, expired);
    }
    this.#forgetIdle(webhookId, now);
    return expired;
  }

  /** Starts what a rate limit let wait, and hands back what waited too long. Call at `wakeAt()`. */
  tick(now: number): T[] {
    const expired: T[] = [];
    for (const lane of this.#lanes.values()) this.#pump(lane, now, expired);
    for (const webhookId of [...this.#lanes.keys()]) this.#forgetIdle(webhookId, now);
    return expired;
  }

  /** When `tick` has work next: a slot comes, or a window closes (behind a hanging receiver, nothing ends). */
  wakeAt(): number | null {
    let next: number | null = null;
    for (const lane of this.#lanes.values()) {
      const job = lane.jobs[lane.head];
      if (!job) continue;
      // A lane with room starts its head at its time (at once, if that passed since it was last pumped); a lane
      // that is full, or held back by the process-wide cap, moves when a request ends, so only its window counts.
      const hasRoom = lane.running < lane.limit && !this.#held.has(lane);
      const at = hasRoom ? startOf(job, lane) : job.startBy + 1;
      if (next === null || at < next) next = at;
    }
    return next;
  }

  /** Every job still waiting, removed (a stop: handed back unstarted). */
  drain(): T[] {
    const all: T[] = [];
    for (const lane of this.#lanes.values()) {
      for (let i = lane.head; i < lane.jobs.length; i++) all.push(lane.jobs[i].item);
      lane.jobs = [];
      lane.head = 0;
    }
    this.#held.clear();
    return all;
  }

  /** The one place a request is admitted: its window, its lane's limit, the process-wide cap. */
  #pump(lane: Lane<T>, now: number, expired: T[]): void {
    while (lane.head < lane.jobs.length) {
      const job = lane.jobs[lane.head];
      if (job.startBy < now) {
        expired.push(job.item);
      } else if (lane.running >= lane.limit || startOf(job, lane) > now) {
        break;
      } else if (this.#running >= this.#maxRunning) {
        this.#held.add(lane);
        break;
      } else {
        lane.running++;
        this.#running++;
        lane.nextStart = now + job.gapMs;
        this.#start(job.item, job.webhookId);
      }
      lane.jobs[lane.head++] = undefined as never;
    }
    if (lane.head === lane.jobs.length) {
      lane.jobs = [];
      lane.head = 0;
    } else if (lane.head > 1024) {
      lane.jobs = lane.jobs.slice(lane.head);
      lane.head = 0;
    }
  }

  /** A lane with nothing running or waiting goes, once its rate limit's spacing no longer matters. */
  #forgetIdle(webhookId: string, now: number): void {
    const lane = this.#lanes.get(webhookId);
    if (
      lane &&
      lane.running === 0 &&
      lane.head === lane.jobs.length &&
      lane.nextStart <= now &&
      !this.#held.has(lane)
    ) {
      this.#lanes.delete(webhookId);
    }
  }
}

/** When a job may start: its slot, and no sooner after its lane's previous start than its rate limit allows. */
const startOf = <T>(job: LaneJob<T>, lane: Lane<T>) => Math.max(job.startAt, lane.nextStart);
