/**
 * The dispatcher: claims due deliveries under a lease and hands them to the sender, whose lanes admit each attempt
 * (lanes.ts); takes the results back, decides (retry-policy.ts), writes the outcomes in batches, gives back what
 * never started, and sleeps until the next due time or a wake-up. A webhook's claims run ahead of its cap, so that
 * its lane starts the next attempt the moment one ends: up to `ahead` × the cap, as its receiver's pace allows
 * (receiver-pace.ts), within an even share of `maxInFlight`, and only while no other process holds it.
 */
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import { decide, type RetryRules } from '../domain/retry-policy.ts';
import type { DeliveryObserver } from '../metrics/metrics.ts';
import type { Store } from '../store/ports.ts';
import type { ClaimedDelivery, HandOffRoom } from '../store/records.ts';
import type { AttemptSpans } from '../telemetry/attempt-spans.ts';
import { Wakeup } from '../wakeup.ts';
import { OutcomeWriter } from './outcome-writer.ts';
import type { Handed, SenderPort, Sent } from './thread-feed.ts';
import { WebhookClaims } from './webhook-claims.ts';

export interface DispatcherOptions {
  store: Pick<Store, 'claims' | 'outcomes'>;
  sender: SenderPort;
  rules: RetryRules;
  clock: Clock;
  logger: Logger;
  /** Longer than the delivery timeout, so a lease only runs out when its holder died. */
  leaseMs: number;
  /** Attempts running at once, in all (the lanes keep it; here it shares out what runs ahead). */
  maxInFlight?: number;
  maxInFlightPerWebhook?: number;
  /** A webhook's claims out at most, as a multiple of its cap, when its receiver's pace allows. */
  ahead?: number;
  batchSize?: number;
  /** Told of every attempt's outcome and decision (metrics). */
  observer?: DeliveryObserver;
  /** Makes each attempt's span once its outcome is decided (tracing on). */
  spans?: AttemptSpans | null;
}

/** Upper bound on a sleep, so that a missed wake-up (another process's ingest) costs at most this much. */
const MAX_SLEEP_MS = 1000;
/** How long a claim may wait in its lane: the wait eats into its lease's margin, which absorbs clock skew. */
export const HOLD_MS = 1000;

export class Dispatcher {
  readonly #options: Required<DispatcherOptions>;
  readonly #webhooks: WebhookClaims;
  /** Every claim out, by delivery: a stop releases those it cannot wait for. */
  readonly #claims = new Map<string, ClaimedDelivery>();
  readonly #outcomes: OutcomeWriter;
  readonly #wakeup = new Wakeup();
  #stopping = false;
  #stopped = false;
  #loop: Promise<void> | null = null;
  /** Resolves when no claim is out (a stop waits for it). */
  #allBack: (() => void) | null = null;

  constructor(options: DispatcherOptions) {
    this.#options = {
      maxInFlight: 512,
      maxInFlightPerWebhook: 64,
      ahead: 8,
      batchSize: 256,
      observer: { attemptFinished() {} },
      spans: null,
      ...options,
    };
    this.#webhooks = new WebhookClaims({ ...this.#options, holdMs: HOLD_MS });
    this.#outcomes = new OutcomeWriter(
      this.#options.store.outcomes,
      this.#options.clock,
      this.#options.logger,
      () => this.#wakeup.wake(),
    );
    this.#options.sender.onResults((sent) => this.#received(sent));
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Attempts that can be running per webhook (its claims out, up to its limit), read by /metrics. */
  inFlight(): ReadonlyMap<string, number> {
    return this.#webhooks.inFlight();
  }

  get leaseMs(): number {
    return this.#options.leaseMs;
  }

  /**
   * What it can take of fresh deliveries at ingest (store/records.ts, HandOffRoom), for the caller to pass to ingest: only
   * for webhooks whose last claim found nothing more due and that no other process holds, so that they go out in the
   * order they came; as many as a claim would take. Undefined when there is none.
   */
  handOffRoom(now: number): HandOffRoom | undefined {
    if (!this.#loop || this.#stopping) return undefined;
    const room = this.#webhooks.handOffRoom(now);
    return room ? { leaseMs: this.#options.leaseMs, room } : undefined;
  }

  /** What ingest handed off, once committed: handed to the sender as claims are. */
  takeHandOff(claims: ClaimedDelivery[]): void {
    // A stop began while the ingest committed: given back, due for another process. So is what goes to a webhook
    // with work waiting since the room was given (a wake-up came): the claims take it, after what waits.
    const now: ClaimedDelivery[] = [];
    const later: ClaimedDelivery[] = [];
    for (const c of claims) (!this.#stopping && this.#webhooks.drained(c.webhook_id) ? now : later).push(c);
    if (later.length > 0) this.#release(later);
    if (now.length > 0) this.#handOver(now, this.#options.clock());
  }

  /** Called after ingest or redelivery: there may be work due now, for any webhook. */
  wake(): void {
    this.#webhooks.undrain();
    this.#wakeup.wake();
  }

  /**
   * Stops claiming; waiting claims come back unstarted; running attempts finish within `graceMs` and are recorded;
   * the leases of any still running are released, so that the next process makes them at once.
   */
  async stop(graceMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.#stopping = true;
    this.#wakeup.wake();
    await this.#loop;
    this.#options.sender.drop();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => {
        this.#allBack = resolve;
        if (this.#claims.size === 0) resolve();
      }),
      new Promise<void>((resolve) => {
        if (Number.isFinite(graceMs)) timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    // Until no outcome waits; from the last check on, nothing runs between here and #stopped.
    do await this.#outcomes.flush();
    while (!this.#outcomes.idle);
    this.#stopped = true;
    const left = [...this.#claims.values()];
    this.#claims.clear();
    if (left.length === 0) return;
    const released = await this.#options.store.outcomes.releaseClaims(left, this.#options.clock());
    this.#options.logger.warn({ released }, 'dispatcher: attempts still running at stop; leases released');
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      this.#wakeup.begin();
      let full = false;
      try {
        const now = this.#options.clock();
        this.#webhooks.forget(now);
        const free = this.#options.ahead * this.#options.maxInFlight - this.#claims.size;
        if (free > 0) {
          const want = Math.min(this.#options.batchSize, free);
          const asked = new Map<string, number>();
          this.#outcomes.claiming();
          const claims = await this.#options.store.claims.claimDue(
            now,
            want,
            this.#options.leaseMs,
            (w, others) => {
              const room = this.#webhooks.claimRoom(w, others, now);
              asked.set(w, room);
              return room;
            },
          );
          full = claims.length === want;
          this.#handOver(claims, now);
          this.#webhooks.noteClaim(claims, asked, full);
        }
        // A wake-up during the claim (a notification, an outcome) means another round at once: no due time to read.
        if (!full && !this.#stopping && !this.#wakeup.woken)
          await this.#wakeup.sleep(await this.#delayUntilDue(now));
      } catch (err) {
        this.#options.logger.error({ err }, 'dispatcher: claim failed; retrying shortly');
        if (!this.#stopping) await this.#wakeup.sleep(MAX_SLEEP_MS);
      }
    }
  }

  /** Claims out to the sender, each with its window; counted out per webhook until they come back. */
  #handOver(claims: ClaimedDelivery[], now: number): void {
    const handed: Handed[] = [];
    for (const claim of claims) {
      const t = this.#webhooks.get(claim.webhook_id);
      this.#webhooks.sent(t, now);
      this.#claims.set(claim.delivery_id, claim);
      // A rate limit's slot (claim.start_at) is within a second: the claim may wait for it, then HOLD_MS more.
      handed.push({
        webhookId: claim.webhook_id,
        item: claim,
        limit: this.#webhooks.limit(t),
        startAt: claim.start_at,
        startBy: Math.max(now, claim.start_at) + HOLD_MS,
        gapMs: claim.rate_limit ? 1000 / claim.rate_limit : 0,
      });
    }
    if (handed.length > 0) this.#options.sender.submit(handed);
  }

  /** Results of the sender: outcomes decided and written, claims that never started given back. */
  #received(sent: Sent[]): void {
    const unstarted: ClaimedDelivery[] = [];
    let claimMore = false;
    const now = this.#options.clock();
    for (const { claim, outcome, trace } of sent) {
      if (!this.#claims.delete(claim.delivery_id)) continue; // released at stop: the next process has it
      const t = this.#webhooks.get(claim.webhook_id);
      this.#webhooks.back(t);
      if (outcome === null) {
        unstarted.push(claim);
        continue;
      }
      t.pace.ended(now, outcome.error === 'timeout');
      const decision = decide(
        outcome,
        claim.cycle_attempt,
        outcome.started_at + outcome.duration_ms,
        this.#options.rules,
      );
      this.#options.observer.attemptFinished(outcome, decision);
      if (trace) this.#options.spans?.end(trace, claim, outcome, decision);
      this.#outcomes.add({ claim, outcome, decision });
      // Claim more once half of what may run ahead is gone, so that claims come in batches.
      const waiting = Math.max(0, t.out - this.#webhooks.limit(t));
      claimMore ||=
        !this.#webhooks.drained(claim.webhook_id) &&
        waiting < Math.max(1, this.#webhooks.aheadOf(t, now) / 2);
    }
    if (unstarted.length > 0) this.#release(unstarted);
    if (claimMore && !this.#stopping) this.#wakeup.wake();
    if (this.#claims.size === 0) this.#allBack?.();
  }

  /** Gives back claims whose time to start passed: due again at once, for this process or another. */
  #release(claims: ClaimedDelivery[]): void {
    if (this.#stopped) return;
    this.#options.store.outcomes.releaseClaims(claims, this.#options.clock()).catch((err: unknown) => {
      // Their leases run out on their own: the deliveries are only late.
      this.#options.logger.error({ err, count: claims.length }, 'dispatcher: could not release claims');
    });
  }

  /**
   * The sleep after a claim at `claimedAt`: only later due times count, since what was due and left unclaimed waits
   * for room, which a finishing attempt makes (and wakes the loop for).
   */
  async #delayUntilDue(claimedAt: number): Promise<number> {
    const due = await this.#options.store.claims.nextDueAt(claimedAt);
    if (due === null) return MAX_SLEEP_MS;
    return Math.min(Math.max(due - this.#options.clock(), 0), MAX_SLEEP_MS);
  }
}
