/**
 * The reference receiver: verifies each delivery (401 on a bad signature or a timestamp more than
 * 300 s away), ignores an event_id it has already processed, answers 2xx, and prints one line per delivery.
 * It can also misbehave on purpose (fail a share of deliveries, answer slowly) so that retries can be watched.
 */
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { readRawBody, writeReceipt } from './adapters/node-http.ts';
import { type DedupeStore, MemoryDedupe } from './dedupe.ts';
import { checkDelivery } from './receive.ts';

export interface ReferenceReceiverOptions {
  /** The webhook's client_sign_secret; without one, deliveries are accepted unverified. */
  secret?: string;
  dedupe?: DedupeStore;
  log?: (line: string) => void;
  now?: () => number;
  /** Share of verified deliveries answered with failStatus instead of 200 (0 to 1); default 0. */
  failRate?: number;
  /** Status of a delivery failed on purpose; default 500. */
  failStatus?: number;
  /** Wait this long before answering a verified delivery (Herald gives up after 8 s). */
  delayMs?: number;
  /** Decides which deliveries fail; seeded in tests. Default Math.random. */
  random?: () => number;
}

export function createReferenceReceiver(options: ReferenceReceiverOptions = {}): Server {
  const dedupe = options.dedupe ?? new MemoryDedupe();
  const log = options.log ?? ((line: string) => console.log(line));
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const failRate = options.failRate ?? 0;

  return createServer(async (req, res) => {
    const rawBody = await readRawBody(req).catch(() => null);
    const time = () => new Date(now()).toISOString();
    if (rawBody === null) return writeReceipt(res, { status: 413, body: { error: 'too_large' } });
    const checked = checkDelivery({ secret: options.secret, now }, req.headers, rawBody);
    if (!checked.ok) {
      log(`${time()}  ${checked.status}  ${checked.reason}: ${checked.message}`);
      return writeReceipt(res, {
        status: checked.status,
        body: { error: checked.reason, message: checked.message },
      });
    }
    const what = `${checked.delivery.event.padEnd(16)} ${checked.eventId}  ${checked.verified ? 'verified' : 'unsigned'}`;
    if (options.delayMs) await sleep(options.delayMs);
    if (failRate > 0 && random() < failRate) {
      // Not recorded as processed: Herald's retry of this event must be handled, not ignored.
      const status = options.failStatus ?? 500;
      log(`${time()}  ${status}  ${what}  (failed on purpose)`);
      return writeReceipt(res, { status, body: { error: 'failed_on_purpose' } });
    }
    const first = await dedupe.firstSeen(checked.eventId);
    log(`${time()}  200  ${what}${first ? '' : '  (duplicate, ignored)'}`);
    writeReceipt(res, { status: 200, body: { received: true, duplicate: !first } });
  });
}
