/** The sender thread (see sender-thread.ts): makes the requests it is given and answers with their results. */
import { parentPort, workerData } from 'node:worker_threads';
import { AddressAllowList, type Cidr } from '../domain/address-allow-list.ts';
import type { Lookup } from '../domain/destination.ts';
import { Sender, type SendRequest, type SendResult } from './sender.ts';
import { StartQueue } from './start-queue.ts';

export interface SenderSetup {
  timeoutMs: number;
  userAgent: string;
  allowPrivate: boolean;
  cidrs: readonly Cidr[];
  /** The main thread has its own resolver (tests rebind names with one): names are resolved there. */
  resolvesHere: boolean;
}

/** A request as handed over: `startWithin` is how many milliseconds from now it may wait for a start (start-queue.ts). */
export interface QueuedRequest extends SendRequest {
  id: number;
  webhook_id: string;
  limit: number;
  startWithin: number;
}

export type ToSender =
  | { kind: 'send'; batch: QueuedRequest[] }
  | { kind: 'drop' }
  | { kind: 'resolved'; id: number; addresses?: string[]; error?: { message: string; code?: string } };

/**
 * Per request: its result and how long it took from its start, or only its id when it was never started. A tuple
 * of primitives, not an object: answers cross by the thousand per second and objects cost more to clone.
 */
export type Answer =
  | [
      id: number,
      status_code: number | null,
      error: string | null,
      response_body: string | null,
      retry_after: string | null,
      took: number,
    ]
  | [id: number];

export type FromSender = { kind: 'results'; batch: Answer[] } | { kind: 'lookup'; id: number; host: string };

function serve(port: NonNullable<typeof parentPort>, setup: SenderSetup): void {
  const resolving = new Map<number, { resolve: (a: string[]) => void; reject: (e: Error) => void }>();
  let nextLookup = 1;
  const lookup: Lookup | undefined = setup.resolvesHere
    ? (host) =>
        new Promise((resolve, reject) => {
          const id = nextLookup++;
          resolving.set(id, { resolve, reject });
          port.postMessage({ kind: 'lookup', id, host } satisfies FromSender);
        })
    : undefined;
  const sender = new Sender({
    timeoutMs: setup.timeoutMs,
    userAgent: setup.userAgent,
    destinations: { allowPrivate: setup.allowPrivate, allow: new AddressAllowList(setup.cidrs), lookup },
  });

  let answers: Answer[] = [];
  const answer = (a: Answer) => {
    // Answers given in one turn go back in one message.
    if (answers.push(a) > 1) return;
    setImmediate(() => {
      port.postMessage({ kind: 'results', batch: answers } satisfies FromSender);
      answers = [];
    });
  };
  const notStarted = (requests: QueuedRequest[]) => {
    for (const r of requests) answer([r.id]);
  };

  const queue = new StartQueue<QueuedRequest>();
  const run = (request: QueuedRequest) => {
    const startedAt = performance.now();
    sender
      .send(request)
      .catch(
        (): SendResult => ({
          status_code: null,
          error: 'internal_error',
          response_body: null,
          retry_after: null,
        }),
      )
      .then((result) => {
        const took = performance.now() - startedAt;
        answer([
          request.id,
          result.status_code,
          result.error,
          result.response_body,
          result.retry_after,
          took,
        ]);
        const expired: QueuedRequest[] = [];
        for (const next of queue.finished(request.webhook_id, performance.now(), expired)) run(next);
        notStarted(expired);
      });
  };

  port.on('message', (m: ToSender) => {
    if (m.kind === 'send') {
      const now = performance.now();
      for (const r of m.batch) {
        if (queue.admit(r.webhook_id, r.limit, now + r.startWithin, r)) run(r);
      }
      return;
    }
    if (m.kind === 'drop') {
      notStarted(queue.drain());
      return;
    }
    const waiting = resolving.get(m.id);
    resolving.delete(m.id);
    if (m.error) waiting?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else waiting?.resolve(m.addresses ?? []);
  });
}

if (parentPort) serve(parentPort, workerData as SenderSetup);
