/**
 * The dispatcher's side of the delivery thread (thread.ts), which makes the attempts off the main thread: the feed
 * prepares each claim (its secrets and headers opened, its timestamp taken) and hands the claims over in batches;
 * results come back in batches. The clock (so an injected one rules an attempt's times), the
 * secrets (the sealing key never leaves its SecretBox) and an injected name resolver stay here.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import type { DestinationPolicy } from '../net/destination.ts';
import type { ClaimedDelivery } from '../store/records.ts';
import type { AttemptSpans, AttemptTrace } from '../telemetry/attempt-spans.ts';
import type { LaneJob } from './lanes.ts';
import type { FromThread, Request, ThreadSetup, ToThread } from './thread.ts';

/** A claim handed over, with the window in which its attempt may start, on the caller's clock. */
export type Handed = LaneJob<ClaimedDelivery>;

/** What came of a handed claim: its attempt's outcome, or null when it never started; its span's name (tracing). */
export interface Sent {
  claim: ClaimedDelivery;
  outcome: AttemptOutcome | null;
  trace?: AttemptTrace;
}

/** What the dispatcher needs of whoever makes its attempts: the thread feed (tests give it one in process). */
export interface SenderPort {
  submit(handed: readonly Handed[]): void;
  /** Every claim still waiting to start comes back unstarted (a stop). */
  drop(): void;
  onResults(handler: (sent: Sent[]) => void): void;
}

export interface ThreadFeedOptions {
  timeoutMs: number;
  destinations: DestinationPolicy;
  secretBox: SecretBox;
  userAgent: string;
  clock: Clock;
  logger: Logger;
  /** Attempts running at once, in all. */
  maxRunning: number;
  /** Names each attempt's span, whose traceparent the attempt carries (tracing on). */
  spans?: AttemptSpans | null;
}

export class ThreadFeed implements SenderPort {
  readonly #options: ThreadFeedOptions;
  readonly #pending = new Map<number, { claim: ClaimedDelivery; handedAt: number; trace?: AttemptTrace }>();
  /** Opened secrets and headers by sealed form (decrypting each time cost half of a send); bounded by the webhooks. */
  readonly #secrets = new Map<string, string>();
  #handler: (sent: Sent[]) => void = () => {};
  #worker: Worker | null = null;
  #next = 1;

  constructor(options: ThreadFeedOptions) {
    this.#options = options;
  }

  onResults(handler: (sent: Sent[]) => void): void {
    this.#handler = handler;
  }

  /** Starts the thread now, so that the first attempts do not wait for it to load. */
  start(): void {
    this.#thread();
  }

  submit(handed: readonly Handed[]): void {
    const now = this.#options.clock();
    const batch: LaneJob<Request>[] = [];
    const faulty: Sent[] = [];
    const spans = this.#options.spans;
    for (const { item: claim, webhookId, limit, startAt, startBy, gapMs } of handed) {
      const id = this.#next++;
      const trace = spans?.begin(claim);
      let secrets: string[];
      let headers: Record<string, string> | null;
      try {
        // The current secret first, then a rotated-out one still in its grace.
        secrets = [claim.secret_sealed, claim.previous_secret_sealed].flatMap((s) =>
          s === null ? [] : [this.#open(s)],
        );
        headers = claim.headers_sealed === null ? null : JSON.parse(this.#open(claim.headers_sealed));
      } catch (err) {
        // A fault of ours (an unreadable sealed secret): logged as an attempt error, never lost.
        this.#options.logger.error(
          { err, delivery_id: claim.delivery_id },
          'sender: attempt could not be made',
        );
        faulty.push({ claim, outcome: internalError(now), trace });
        continue;
      }
      this.#pending.set(id, { claim, handedAt: now, trace });
      const request: Request = {
        id,
        // A broker's URL with its password, opened here: the thread alone holds it.
        destination_url:
          claim.destination_sealed === null ? claim.destination_url : this.#open(claim.destination_sealed),
        event_id: claim.event_id,
        body: claim.body,
        // Signed when handed over: within a second or two of its start, well within a receiver's tolerance.
        timestamp: String(Math.floor(now / 1000)),
        secrets,
        headers,
        standard: claim.standard_webhooks,
      };
      // Only when tracing: with it off, a request carries nothing more.
      if (trace) request.traceparent = trace.traceparent;
      batch.push({
        webhookId,
        item: request,
        limit,
        // Counted from now: the thread's clock is another.
        startAt: Math.max(0, startAt - now),
        startBy: startBy - now,
        gapMs,
      });
    }
    // When it was sent, on the clock both threads share: the thread takes its time in transit off every window.
    const sentAt = performance.timeOrigin + performance.now();
    if (batch.length > 0) this.#thread().postMessage({ kind: 'submit', batch, sentAt } satisfies ToThread);
    if (faulty.length > 0) queueMicrotask(() => this.#handler(faulty));
  }

  drop(): void {
    this.#worker?.postMessage({ kind: 'drop' } satisfies ToThread);
  }

  /** After the dispatcher's stop: claims still open were released to the next process, so they are dropped. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#pending.clear();
    await worker?.terminate();
  }

  #open(sealed: string): string {
    let plain = this.#secrets.get(sealed);
    if (plain === undefined) {
      if (this.#secrets.size >= 10_000) this.#secrets.clear();
      plain = this.#options.secretBox.open(sealed);
      this.#secrets.set(sealed, plain);
    }
    return plain;
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const { timeoutMs, userAgent, destinations, maxRunning } = this.#options;
    const setup: ThreadSetup = {
      timeoutMs,
      userAgent,
      allowPrivate: destinations.allowPrivate,
      cidrs: destinations.allow?.cidrs ?? [],
      resolvesHere: destinations.lookup !== undefined,
      maxRunning,
    };
    const worker = new Worker(new URL('./thread.ts', import.meta.url), {
      workerData: setup,
      // Its garbage is short-lived: a small young generation keeps the thread's heap small.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    worker.on('message', (m: FromThread) => this.#receive(worker, m));
    // A thread that dies takes its attempts with it: each is an attempt error (retried on schedule); the next
    // claims start a new thread.
    const lost = (err: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#options.logger.error({ err }, 'sender: the delivery thread died');
      const now = this.#options.clock();
      const sent = [...this.#pending.values()].map(({ claim, trace }) => ({
        claim,
        outcome: internalError(now),
        trace,
      }));
      this.#pending.clear();
      if (sent.length > 0) this.#handler(sent);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`delivery thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #receive(worker: Worker, m: FromThread): void {
    if (m.kind === 'lookup') {
      this.#options.destinations.lookup?.(m.host).then(
        (addresses) => worker.postMessage({ kind: 'resolved', id: m.id, addresses } satisfies ToThread),
        (err: Error & { code?: string }) =>
          worker.postMessage({
            kind: 'resolved',
            id: m.id,
            error: { message: err.message, code: err.code },
          } satisfies ToThread),
      );
      return;
    }
    // The attempts end now on this clock; each started when the thread sent it, `took` before.
    const ended = this.#options.clock();
    const sent: Sent[] = [];
    for (const r of m.batch) {
      const pending = this.#pending.get(r[0]);
      if (!pending) continue;
      this.#pending.delete(r[0]);
      if (r.length === 1) {
        sent.push({ claim: pending.claim, outcome: null });
        continue;
      }
      const [, status_code, error, response_body, retry_after, took, acknowledged] = r;
      const started_at = Math.max(pending.handedAt, Math.round(ended - took));
      const outcome = {
        started_at,
        duration_ms: ended - started_at,
        status_code,
        error,
        response_body,
        retry_after,
        ...(acknowledged ? { acknowledged } : {}),
      };
      sent.push({ claim: pending.claim, outcome, trace: pending.trace });
    }
    if (sent.length > 0) this.#handler(sent);
  }
}

const internalError = (at: number): AttemptOutcome => ({
  started_at: at,
  duration_ms: 0,
  status_code: null,
  error: 'internal_error',
  response_body: null,
  retry_after: null,
});
