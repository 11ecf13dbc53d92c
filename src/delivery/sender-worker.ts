/** The sender thread (see sender-thread.ts): makes the requests it is given and answers with their results. */
import { parentPort, workerData } from 'node:worker_threads';
import { AddressAllowList, type Cidr } from '../domain/address-allow-list.ts';
import type { Lookup } from '../domain/destination.ts';
import { Sender, type SendRequest, type SendResult } from './sender.ts';

export interface SenderSetup {
  timeoutMs: number;
  userAgent: string;
  allowPrivate: boolean;
  cidrs: readonly Cidr[];
  /** The main thread has its own resolver (tests rebind names with one): names are resolved there. */
  resolvesHere: boolean;
}

export type ToSender =
  | { kind: 'send'; batch: (SendRequest & { id: number })[] }
  | { kind: 'resolved'; id: number; addresses?: string[]; error?: { message: string; code?: string } };

export type FromSender =
  | { kind: 'results'; batch: [number, SendResult][] }
  | { kind: 'lookup'; id: number; host: string };

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

  let results: [number, SendResult][] = [];
  const done = (id: number, result: SendResult) => {
    // Results finished in one turn go back in one message.
    if (results.push([id, result]) > 1) return;
    setImmediate(() => {
      port.postMessage({ kind: 'results', batch: results } satisfies FromSender);
      results = [];
    });
  };

  port.on('message', (m: ToSender) => {
    if (m.kind === 'send') {
      for (const { id, ...request } of m.batch) {
        sender.send(request).then(
          (result) => done(id, result),
          () =>
            done(id, { status_code: null, error: 'internal_error', response_body: null, retry_after: null }),
        );
      }
      return;
    }
    const waiting = resolving.get(m.id);
    resolving.delete(m.id);
    if (m.error) waiting?.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else waiting?.resolve(m.addresses ?? []);
  });
}

if (parentPort) serve(parentPort, workerData as SenderSetup);
