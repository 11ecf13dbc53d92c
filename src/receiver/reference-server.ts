/**
 * The reference receiver (SPEC §10): verifies each delivery (401 on a bad signature or a timestamp more than
 * 300 s away), ignores an event_id it has already processed, answers 2xx, and prints one line per delivery.
 */
import { createServer, type Server } from 'node:http';
import { HEADERS } from '../domain/signature.ts';
import { type DedupeStore, MemoryDedupe } from './dedupe.ts';
import { verify } from './verify.ts';

export interface ReferenceReceiverOptions {
  /** The webhook's client_sign_secret; without one, deliveries are accepted unverified. */
  secret?: string;
  dedupe?: DedupeStore;
  log?: (line: string) => void;
  now?: () => number;
}

export function createReferenceReceiver(options: ReferenceReceiverOptions = {}): Server {
  const dedupe = options.dedupe ?? new MemoryDedupe();
  const log = options.log ?? ((line: string) => console.log(line));
  const now = options.now ?? Date.now;

  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks);
      const time = new Date(now()).toISOString();
      if (options.secret) {
        const result = verify({ secret: options.secret, headers: req.headers, rawBody, now });
        if (!result.ok) {
          log(`${time}  401  ${result.reason}: ${result.message}`);
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: result.reason, message: result.message }));
          return;
        }
      }
      const eventId = String(req.headers[HEADERS.eventId] ?? '');
      let kind = '?';
      try {
        kind = JSON.parse(rawBody.toString('utf8')).event ?? '?';
      } catch {}
      const first = await dedupe.firstSeen(eventId);
      const verified = options.secret ? 'verified' : 'unsigned';
      log(`${time}  200  ${kind.padEnd(16)} ${eventId}  ${verified}${first ? '' : '  (duplicate, ignored)'}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: true, duplicate: !first }));
    });
  });
}
