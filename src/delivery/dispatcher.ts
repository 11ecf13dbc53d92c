/**
 * The dispatcher: claims due deliveries in batches under a lease, sends them concurrently with a cap per webhook
 * (a slow receiver can only hold up itself), writes outcomes in batches, and sleeps until the next due time or a
 * wake-up — never a busy poll. A webhook that no other process is sending to is claimed up to `claimAhead` × its
 * cap: the claims beyond the cap are held and start as attempts finish, while the next claim is made. A sender
 * that keeps its own per-webhook cap (the sender thread) is handed up to `handAhead` × the cap, so that it starts
 * the next attempt itself. Both run ahead only as far as the webhook's receiver answered lately (answering.ts).
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { decide, type RetryRules } from '../domain/retry-policy.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import type { DeliveryObserver } from '../metrics/metrics.ts';
import type { ClaimedDelivery, Store } from '../store/store.ts';
import { Wakeup } from '../wakeup.ts';
import { Answering } from './answering.ts';
import { type Held, HeldClaims } from './held-claims.ts';
import { InFlight } from './in-flight.ts';
import { OutcomeWriter } from './outcome-writer.ts';
import { Refill } from './refill.ts';
import type { SendSlot } from './start-queue.ts';

export interface DispatcherOptions {
  store: Store;
  /** Makes the attempt; null when a sender that queues (`handAhead` > 1) hands the claim back unstarted. */
  send: (claim: ClaimedDelivery, slot: SendSlot) => Promise<AttemptOutcome | null>;
  /**
   * Attempts handed to the sender per webhook, as a multiple of the cap: above 1 only for a sender that starts
   * at most `slot.limit` of a webhook's attempts at once and hands back those it cannot start by `slot.startBy`.
   */
  handAhead?: number;
  /** Makes such a sender hand back every attempt still waiting to start (a stop). */
  dropWaiting?: () => void;
  rules: RetryRules;
  clock: Clock;
  logger: Logger;
  /** Longer than the delivery timeout, so a lease only runs out when its holder died. */
  leaseMs: number;
  maxInFlight?: number;
  maxInFlightPerWebhook?: number;
  /** Leases per webhook, as a multiple of its cap, when no other process holds any of its leases. */
  claimAhead?: number;
  batchSize?: number;
  /** Told of every attempt's outcome and decision (metrics). */
  observer?: DeliveryObserver;
}

/** Upper bound on a sleep, so that a missed wake-up (another process's ingest) costs at most this much. */
const MAX_SLEEP_MS = 1000;
/**
 * How long a held claim may wait for its attempt. The lease's margin beyond the timeout is what tolerates clock
 * differences between processes, so waiting eats into it: keep it short. A busy webhook drains its held claims in
 * milliseconds; a slow one's go back to the queue.
 */
export const HOLD_MS = 1000;

export class Dispatcher {
  readonly #o: Required<DispatcherOptions>;
  readonly #inFlight = new InFlight((webhookId) => this.#limitOf(webhookId));
  readonly #held = new HeldClaims();
  readonly #answering: Answering;
  /** Per webhook, the other processes' leases seen at the last claim: this process's share of the cap is the rest. */
  readonly #leasedByOthers = new Map<string, number>();
  /** Set when an attempt could not start for the process-wide cap: the next finishing attempt looks at every webhook. */
  #starved = false;
  readonly #refill: Refill;
  /** Attempts in flight, with their claims: a graceful stop gives back the leases of those it cannot wait for. */
  readonly #running = new Map<Promise<void>, ClaimedDelivery>();
  /** Claims the sender handed back unstarted, given back to the store together once per turn. */
  #handedBack: ClaimedDelivery[] = [];
  readonly #outcomes: OutcomeWriter;
  #stopping = false;
  #stopped = false;
  #loop: Promise<void> | null = null;
  readonly #wakeup = new Wakeup();
  #wakeScheduled = false;

  constructor(options: DispatcherOptions) {
    this.#o = {
      maxInFlight: 512,
      maxInFlightPerWebhook: 64,
      claimAhead: 8,
      handAhead: 1,
      dropWaiting: () => {},
      batchSize: 256,
      observer: { attemptFinished() {} },
      ...options,
    };
    this.#refill = new Refill();
    // A webhook whose receiver's pace is not known yet runs one cap ahead, as far as a fresh burst needs.
    this.#answering = new Answering(HOLD_MS, this.#o.maxInFlightPerWebhook);
    this.#outcomes = new OutcomeWriter(this.#o.store, this.#o.clock, this.#o.logger, () => this.#rouse());
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Attempts in flight per webhook, read by /metrics. */
  inFlight(): ReadonlyMap<string, number> {
    return this.#inFlight.runningByWebhook();
  }

  /** Called after ingest or redelivery: there may be work due now, for any webhook. */
  wake(): void {
    this.#refill.newWork();
    this.#rouse();
  }

  /** Runs the loop again now (or as soon as the claim in progress ends). */
  #rouse(): void {
    this.#wakeup.wake();
  }

  /**
   * Stops claiming, lets in-flight attempts finish for up to `graceMs` (the sender's timeout ends them sooner),
   * records them, and releases the leases of any still running so that the next process retries them at once.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    // Held claims and those waiting in the sender were never attempted: given back with those still running.
    this.#o.dropWaiting();
    const unstarted = this.#held.drain();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      if (Number.isFinite(graceMs)) timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([Promise.all(this.#running.keys()), grace]);
    clearTimeout(timer);
    // Until no outcome waits to be written; from the last check on, nothing runs between here and #stopped.
    do await this.#outcomes.flush();
    while (!this.#outcomes.idle);
    const left = [...this.#running.values(), ...unstarted, ...this.#handedBack.splice(0)];
    this.#stopped = true;
    if (left.length === 0) return;
    const released = await this.#o.store.releaseClaims(left, this.#o.clock());
    if (this.#running.size > 0) {
      this.#o.logger.warn({ released }, 'dispatcher: attempts still running at stop; leases released');
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#wakeup.begin();
      let full = false;
      try {
        // Held claims never outnumber the attempts allowed at once, so that each can start within a round of them
        // (across many webhooks the process-wide cap, not each webhook's, is what holds them back).
        const now = this.#o.clock();
        // Found here too, not only when an attempt of their webhook ends: a hanging receiver's never does.
        const stale = this.#held.sweep(now);
        if (stale.length > 0) this.#release(stale);
        const free = 2 * this.#o.maxInFlight - this.#inFlight.handed - this.#held.size;
        if (free > 0) {
          const want = Math.min(this.#o.batchSize, free);
          this.#refill.begin();
          this.#outcomes.claiming();
          const claims = await this.#o.store.claimDue(now, want, this.#o.leaseMs, (w, leased) => {
            const room = this.#room(w, leased);
            this.#refill.ask(w, room);
            return room;
          });
          full = claims.length === want;
          this.#refill.got(claims, full);
          for (const claim of claims) this.#held.add(claim, now + HOLD_MS);
          this.#startAll();
        }
        if (!full) await this.#sleep(await this.#delayUntilDue(now));
      } catch (err) {
        this.#o.logger.error({ err }, 'dispatcher: claim failed; retrying shortly');
        await this.#sleep(MAX_SLEEP_MS);
      }
    }
  }

  /**
   * How many more of a webhook's deliveries to lease. The cap counts this process's attempts and held claims and,
   * on a shared store, the other workers' unexpired leases; only a webhook no one else holds is claimed ahead.
   */
  #room(webhookId: string, leasedByOthers: number): number {
    if (leasedByOthers > 0) this.#leasedByOthers.set(webhookId, leasedByOthers);
    else this.#leasedByOthers.delete(webhookId);
    this.#inFlight.recount(webhookId);
    const ahead = leasedByOthers === 0 ? this.#claimAheadOf(webhookId) : 0;
    const leases = this.#o.maxInFlightPerWebhook + ahead;
    return leases - this.#inFlightOf(webhookId) - this.#held.count(webhookId) - leasedByOthers;
  }

  /** Leases beyond the cap: up to `claimAhead` × the cap, as far as the receiver's pace allows (answering.ts). */
  #claimAheadOf(webhookId: string): number {
    const cap = this.#o.maxInFlightPerWebhook;
    return Math.min((this.#o.claimAhead - 1) * cap, this.#aheadOf(webhookId));
  }

  /**
   * Attempts beyond the cap, as far as the receiver's pace allows and within an even share of `maxInFlight` among
   * the webhooks in flight: 50 webhooks each claimed 7 × their cap ahead (W5) delivered half as fast as at 1 ×, a
   * few of them holding the leases the others needed to run.
   */
  #aheadOf(webhookId: string): number {
    const share = Math.floor(this.#o.maxInFlight / Math.max(1, this.#inFlight.webhooks));
    return Math.min(share, this.#answering.ahead(webhookId, this.#inFlightOf(webhookId), this.#o.clock()));
  }

  /** Attempts handed to the sender (running, or waiting in a sender that queues). */
  #inFlightOf(webhookId: string): number {
    return this.#inFlight.of(webhookId);
  }

  /** This process's share of the webhook's cap. */
  #limitOf(webhookId: string): number {
    return this.#o.maxInFlightPerWebhook - (this.#leasedByOthers.get(webhookId) ?? 0);
  }

  /** Claims of the webhook not yet started: held here, or handed to the sender beyond what it runs at once. */
  #waitingOf(webhookId: string): number {
    const queued = Math.max(0, this.#inFlightOf(webhookId) - this.#limitOf(webhookId));
    return this.#held.count(webhookId) + queued;
  }

  /** Starts held claims of every webhook, as far as the caps allow. */
  #startAll(): void {
    this.#starved = false;
    for (const webhookId of [...this.#held.webhooks()]) this.#start(webhookId);
  }

  /** Hands the webhook's held claims to the sender up to its share of the cap (× handAhead); stale ones go back. */
  #start(webhookId: string): void {
    if (this.#stopping) return;
    const limit = this.#limitOf(webhookId);
    const handed = limit + Math.min((this.#o.handAhead - 1) * limit, this.#aheadOf(webhookId));
    const stale: ClaimedDelivery[] = [];
    while (this.#inFlightOf(webhookId) < handed && this.#held.count(webhookId) > 0) {
      // Only an attempt that would run counts against the process-wide cap; one that would wait does not.
      if (this.#inFlightOf(webhookId) < limit && this.#inFlight.running >= this.#o.maxInFlight) {
        this.#starved = true;
        break;
      }
      const held = this.#held.take(webhookId, this.#o.clock(), stale);
      if (held) this.#launch(held, limit);
    }
    if (stale.length > 0) this.#release(stale);
  }

  /** Gives back held claims whose time to start passed: due again at once, for this process or another. */
  #release(claims: ClaimedDelivery[]): void {
    this.#o.store.releaseClaims(claims, this.#o.clock()).catch((err: unknown) => {
      // Their leases run out on their own: the deliveries are only late.
      this.#o.logger.error({ err, count: claims.length }, 'dispatcher: could not release held claims');
    });
  }

  /** A claim the sender could not start in time: given back like a stale held claim (a stop gives back the rest). */
  #handBack(claim: ClaimedDelivery): void {
    if (this.#handedBack.push(claim) > 1) return;
    setImmediate(() => {
      if (this.#stopping) return;
      this.#release(this.#handedBack.splice(0));
    });
  }

  /**
   * How long to sleep after a claim at `claimedAt`. Deliveries due by then and left unclaimed wait for room, which
   * only a finishing attempt makes (and it wakes the loop), so only later due times count: a backlog that waits
   * for room must not postpone another webhook's retry that falls due meanwhile.
   */
  async #delayUntilDue(claimedAt: number): Promise<number> {
    const due = await this.#o.store.nextDueAt(claimedAt);
    if (due === null) return MAX_SLEEP_MS;
    return Math.min(Math.max(due - this.#o.clock(), 0), MAX_SLEEP_MS);
  }

  #wakeSoon(): void {
    if (this.#wakeScheduled) return;
    this.#wakeScheduled = true;
    setImmediate(() => {
      this.#wakeScheduled = false;
      this.#rouse();
    });
  }

  #sleep(ms: number): Promise<void> {
    return this.#stopping ? Promise.resolve() : this.#wakeup.sleep(ms);
  }

  #launch({ claim, startBy }: Held, limit: number): void {
    const webhookId = claim.webhook_id;
    if (this.#inFlightOf(webhookId) === 0) this.#answering.busy(webhookId, this.#o.clock());
    this.#inFlight.add(webhookId);
    const run = this.#attempt(claim, { limit, startBy }).finally(() => {
      this.#running.delete(run);
      this.#inFlight.remove(webhookId);
      if (this.#inFlightOf(webhookId) === 0) this.#answering.idle(webhookId);
      if (this.#starved) this.#startAll();
      else this.#start(webhookId);
      // Claim more while the held claims keep the webhook busy.
      if (this.#refill.needed(webhookId, this.#waitingOf(webhookId), this.#claimAheadOf(webhookId))) {
        this.#wakeSoon();
      }
    });
    this.#running.set(run, claim);
  }

  async #attempt(claim: ClaimedDelivery, slot: SendSlot): Promise<void> {
    const outcome = await this.#o.send(claim, slot).catch((err: unknown): AttemptOutcome => {
      // A fault of ours (an unreadable sealed secret, say) is logged as an attempt error, never lost.
      this.#o.logger.error({ err, delivery_id: claim.delivery_id }, 'dispatcher: attempt could not be made');
      const now = this.#o.clock();
      return {
        started_at: now,
        duration_ms: 0,
        status_code: null,
        error: 'internal_error',
        response_body: null,
        retry_after: null,
      };
    });
    if (this.#stopped) return; // released at stop: the next process makes this attempt again
    if (outcome === null) {
      this.#handBack(claim);
      return;
    }
    this.#answering.ended(claim.webhook_id, this.#o.clock(), outcome.error === 'timeout');
    const decision = decide(
      outcome,
      claim.cycle_attempt,
      outcome.started_at + outcome.duration_ms,
      this.#o.rules,
    );
    this.#o.observer.attemptFinished(outcome, decision);
    this.#outcomes.add({ claim, outcome, decision });
  }
}
