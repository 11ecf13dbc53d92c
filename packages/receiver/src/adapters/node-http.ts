/**
 * node:http adapter. The raw body is read from the stream itself, so nothing can re-serialise it before the
 * signature check (the classic pitfall: verifying JSON.stringify(JSON.parse(body)) instead of the bytes sent).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MemoryDedupe } from '../dedupe.ts';
import { type Receipt, type ReceiveOptions, receiveDelivery } from '../receive.ts';

/** Larger than any delivery Herald sends (256 KiB per event plus the envelope). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export class BodyTooLarge extends Error {}

/** The exact bytes of a request body; rejects with BodyTooLarge beyond `maxBytes`. */
export function readRawBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new BodyTooLarge(`body larger than ${maxBytes} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export function writeReceipt(res: ServerResponse, receipt: Receipt): void {
  res.writeHead(receipt.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(receipt.body));
}

export type HandlerOptions = Omit<ReceiveOptions, 'dedupe'> & {
  /** Default: an in-memory MemoryDedupe of this handler. */
  dedupe?: ReceiveOptions['dedupe'];
  maxBodyBytes?: number;
};

/** A request listener for http.createServer: verifies, deduplicates, calls onDelivery, answers. */
export function heraldNodeHandler(
  options: HandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const receive: ReceiveOptions = { ...options, dedupe: options.dedupe ?? new MemoryDedupe() };
  return (req, res) => {
    readRawBody(req, options.maxBodyBytes)
      .then((raw) => receiveDelivery(receive, req.headers, raw))
      .then(
        (receipt) => writeReceipt(res, receipt),
        (err) => {
          const tooLarge = err instanceof BodyTooLarge;
          if (!res.headersSent)
            writeReceipt(res, {
              status: tooLarge ? 413 : 400,
              body: { error: tooLarge ? 'too_large' : 'bad_request' },
            });
        },
      );
  };
}
