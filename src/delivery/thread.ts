/**
 * The delivery thread (started by thread-feed.ts): claims wait in their webhook's lane (lanes.ts) until they may start,
 * each attempt is made here (by its destination's provider, net/destinations/registry.ts), and results go back in batches, one message per turn, as tuples (cheaper
 * to clone than objects, by the thousand per second).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AddressAllowList, type Cidr } from '../net/address-allow-list.ts';
import type { Lookup } from '../net/destination.ts';
import type { Sending } from '../net/destinations/provider.ts';
import { Destinations } from '../net/destinations/registry.ts';
import { type LaneJob, Lanes } from './lanes.ts';

export interface ThreadSetup {
  timeoutMs: number;
  userAgent: string;
  allowPrivate: boolean;
  cidrs: readonly Cidr[];
  /** The main thread has its own resolver (tests rebind names with one): names are resolved there. */
  resolvesHere: boolean;
  /** Requests running at once, in all. */
  maxRunning: number;
}

/** A claim's request, as the thread feed hands it over (in a LaneJob whose times count from the handing over). */
export interface Request extends Sending {
  id: number;
}

export type ToThread =
  | { kind: 'submit'; batch: LaneJob<Request>[]; sentAt: number }
  | { kind: 'drop' }
  | { kind: 'resolved'; id: number; addresses?: string[]; error?: { message: string; code?: string } };

/** An attempt's outcome, or only the claim's id when it was never started. */
export type Result =
  | [
      id: number,
      status_code: number | null,
      error: string | null,
      response_body: string | null,
      retry_after: string | null,
      duration_ms: number,
      acknowledged: boolean,
    ]
  | [id: number];

export type FromThread = { kind: 'results'; batch: Result[] } | { kind: 'lookup'; id: number; host: string };

function serve(port: NonNullable<typeof parentPort>, setup: ThreadSetup): void {
  const resolving = new Map<number, { resolve: (a: string[]) => void; reject: (e: Error) => void }>();
  let nextLookup = 1;
  const lookup: Lookup | undefined = setup.resolvesHere
    ? (host) =>
        new Promise((resolve, reject) => {
          const id = nextLookup++;
          resolving.set(id, { resolve, reject });
          port.postMessage({ kind: 'lookup', id, host } satisfies FromThread);
        })
    : undefined;
  const destinations = { allowPrivate: setup.allowPrivate, allow: new AddressAllowList(setup.cidrs), lookup };
  const registry = new Destinations({ timeoutMs: setup.timeoutMs, userAgent: setup.userAgent, destinations });

  let results: Result[] = [];
  const report = (r: Result) => {
    // Results of one turn go back in one message.
    if (results.push(r) > 1) return;
    setImmediate(() => {
      port.postMessage({ kind: 'results', batch: results } satisfies FromThread);
      results = [];
    });
  };
  const unstarted = (requests: Request[]) => {
    for (const r of requests) report([r.id]);
  };

  const lanes = new Lanes<Request>(setup.maxRunning, (request, webhookId) => {
    registry
      .attempt(request)
      .then(
        (o): Result => [
          request.id,
          o.status_code,
          o.error,
          o.response_body,
          o.retry_after,
          o.duration_ms,
          o.acknowledged === true,
        ],
        // A fault of ours (never expected): an attempt error, logged and retried like any, never lost.
        (): Result => [request.id, null, 'internal_error', null, null, 0, false],
      )
      .then((result) => {
        report(result);
        unstarted(lanes.finished(webhookId, performance.now()));
        schedule();
      });
  });

  // One timer for the lanes: a rate limit's next slot, or a waiting claim's window closing (lanes.ts wakeAt).
  let timer: NodeJS.Timeout | null = null;
  let timerAt = Number.POSITIVE_INFINITY;
  const schedule = () => {
    const next = lanes.wakeAt() ?? Number.POSITIVE_INFINITY;
    if (next >= timerAt) return;
    if (timer) clearTimeout(timer);
    timerAt = next;
    timer = Number.isFinite(next)
      ? setTimeout(
          () => {
            timer = null;
            timerAt = Number.POSITIVE_INFINITY;
            unstarted(lanes.tick(performance.now()));
            schedule();
          },
          Math.max(0, next - performance.now()),
        )
      : null;
  };

  port.on('message', (m: ToThread) => {
    if (m.kind === 'submit') {
      const now = performance.now();
      // Windows count from when the claims were handed over, not from when this busy-or-not thread read them.
      const sent = now - Math.max(0, performance.timeOrigin + now - m.sentAt);
      for (const job of m.batch) {
        job.startAt += sent;
        job.startBy += sent;
      }
      unstarted(lanes.submit(m.batch, now));
      schedule();
    } else if (m.kind === 'drop') {
      unstarted(lanes.drain());
    } else {
      const waiting = resolving.get(m.id);
      resolving.delete(m.id);
      if (m.error) waiting?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else waiting?.resolve(m.addresses ?? []);
    }
  });
}

if (parentPort) serve(parentPort, workerData as ThreadSetup);
