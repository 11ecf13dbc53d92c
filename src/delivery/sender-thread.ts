/**
 * Attempts are made in a thread of their own (sender-worker.ts): the HTTP client — signing, writing, parsing
 * answers — was a quarter of the main thread's time under load, time the store and the API need. What must stay
 * here stays here: the clock (the signed timestamp and an attempt's end, so an injected clock rules them; the
 * start is the end less the time the thread measured for the request), the secrets (opened here, so the sealing key never leaves its SecretBox) and an injected
 * name resolver, which the thread asks for. Requests and results cross in batches, one message per turn.
 */
import { Worker } from 'node:worker_threads';
import type { Clock } from '../domain/clock.ts';
import type { DestinationPolicy } from '../domain/destination.ts';
import type { SecretBox } from '../domain/secret-box.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import type { ClaimedDelivery } from '../store/store.ts';
import type { SendResult } from './sender.ts';
import type { FromSender, QueuedRequest, SenderSetup, ToSender } from './sender-worker.ts';
import type { SendSlot } from './start-queue.ts';

export interface SenderThreadOptions {
  timeoutMs: number;
  destinations: DestinationPolicy;
  secretBox: SecretBox;
  userAgent: string;
  clock: Clock;
}

interface Pending {
  /** Null: handed back unstarted. */
  resolve: (answer: { result: SendResult; took: number } | null) => void;
  reject: (err: Error) => void;
}

export class SenderThread {
  readonly #o: SenderThreadOptions;
  readonly #pending = new Map<number, Pending>();
  /** Opened secrets by sealed form: decrypting on every attempt cost half of a send. Bounded by the webhook count. */
  readonly #secrets = new Map<string, string>();
  #worker: Worker | null = null;
  #outbox: QueuedRequest[] = [];
  #next = 1;

  constructor(options: SenderThreadOptions) {
    this.#o = options;
  }

  /**
   * Makes the claim's attempt when the webhook's requests running in the thread allow it (`slot.limit`), or
   * resolves to null if it could not start by `slot.startBy` or the queue was dropped.
   */
  send(claim: ClaimedDelivery, slot: SendSlot): Promise<AttemptOutcome | null> {
    const { clock } = this.#o;
    const handedAt = clock();
    const id = this.#next++;
    let secret: string | null;
    try {
      secret = claim.secret_sealed === null ? null : this.#secret(claim.secret_sealed);
    } catch (err) {
      return Promise.reject(err);
    }
    const request = {
      id,
      destination_url: claim.destination_url,
      event_id: claim.event_id,
      body: claim.body,
      // Signed when handed over: at most HOLD_MS before the request leaves, well within any receiver's tolerance.
      timestamp: String(Math.floor(handedAt / 1000)),
      secret,
      webhook_id: claim.webhook_id,
      limit: slot.limit,
      startWithin: slot.startBy - handedAt,
    };
    return new Promise<Parameters<Pending['resolve']>[0]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Every attempt handed over in this turn goes in one message.
      if (this.#outbox.push(request) === 1) queueMicrotask(() => this.#post());
    }).then((answer) => {
      if (answer === null) return null;
      // The attempt ends now on this clock, which tests inject; it started when the thread sent it (after a wait
      // for the webhook's cap, or for the thread itself to start), which only the thread measures.
      const ended = clock();
      const started_at = Math.max(handedAt, Math.round(ended - answer.took));
      return { started_at, duration_ms: ended - started_at, ...answer.result };
    });
  }

  /** Starts the thread now, so that the first attempts do not wait for it to load. */
  start(): void {
    this.#thread();
  }

  /** Hands back every request still waiting to start (a stop): their sends resolve to null. */
  dropWaiting(): void {
    this.#worker?.postMessage({ kind: 'drop' } satisfies ToSender);
  }

  /** After the dispatcher's stop: requests still open were released to the next process, so they are dropped. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#fail(new Error('sender closed'));
    await worker?.terminate();
  }

  #secret(sealed: string): string {
    let plain = this.#secrets.get(sealed);
    if (plain === undefined) {
      if (this.#secrets.size >= 10_000) this.#secrets.clear();
      plain = this.#o.secretBox.open(sealed);
      this.#secrets.set(sealed, plain);
    }
    return plain;
  }

  #post(): void {
    const batch = this.#outbox;
    this.#outbox = [];
    this.#thread().postMessage({ kind: 'send', batch } satisfies ToSender);
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const { timeoutMs, userAgent, destinations } = this.#o;
    const setup: SenderSetup = {
      timeoutMs,
      userAgent,
      allowPrivate: destinations.allowPrivate,
      cidrs: destinations.allow?.cidrs ?? [],
      resolvesHere: destinations.lookup !== undefined,
    };
    const worker = new Worker(new URL('./sender-worker.ts', import.meta.url), {
      workerData: setup,
      // Its garbage is short-lived (requests, answers): a small young generation keeps the thread's memory down
      // (60 → ~25 MB of heap at 13k deliveries/s) for scavenges in a thread that has time to spare.
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    worker.on('message', (m: FromSender) => this.#receive(worker, m));
    // A thread that dies takes its requests with it: they fail as attempts (internal_error, retried on schedule),
    // and the next attempt starts a new thread.
    const lost = (err: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#fail(err);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`sender thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }

  #receive(worker: Worker, m: FromSender): void {
    if (m.kind === 'results') {
      for (const a of m.batch) {
        const pending = this.#pending.get(a[0]);
        this.#pending.delete(a[0]);
        if (a.length === 1) {
          pending?.resolve(null);
          continue;
        }
        const [, status_code, error, response_body, retry_after, took] = a;
        pending?.resolve({ result: { status_code, error, response_body, retry_after }, took });
      }
      return;
    }
    const lookup = this.#o.destinations.lookup;
    lookup?.(m.host).then(
      (addresses) => worker.postMessage({ kind: 'resolved', id: m.id, addresses } satisfies ToSender),
      (err: Error & { code?: string }) =>
        worker.postMessage({
          kind: 'resolved',
          id: m.id,
          error: { message: err.message, code: err.code },
        } satisfies ToSender),
    );
  }

  #fail(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }
}
