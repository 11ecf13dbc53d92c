/**
 * Express adapter, typed structurally so that Express is not a dependency of Herald. Works with or without
 * `express.raw()` in front; with `express.json()` in front the bytes are gone, and it says so instead of
 * failing every signature.
 *
 *   app.post('/webhooks/herald', heraldExpress({ secret, onDelivery: async (d) => { … } }));
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MemoryDedupe } from '../dedupe.ts';
import { type ReceiveOptions, receiveDelivery } from '../receive.ts';
import { type HandlerOptions, readRawBody, writeReceipt } from './node-http.ts';

/** What the adapter needs of Express's request: Node's request plus the `body` a body parser may have set. */
export interface ExpressLikeRequest extends IncomingMessage {
  body?: unknown;
}
export type ExpressLikeNext = (err?: unknown) => void;

export function heraldExpress(
  options: HandlerOptions,
): (req: ExpressLikeRequest, res: ServerResponse, next: ExpressLikeNext) => void {
  const receive: ReceiveOptions = { ...options, dedupe: options.dedupe ?? new MemoryDedupe() };
  return (req, res, next) => {
    let raw: Promise<Buffer>;
    if (Buffer.isBuffer(req.body)) raw = Promise.resolve(req.body);
    else if (req.readableEnded || (req.body !== undefined && typeof req.body === 'object')) {
      next(
        new Error(
          'heraldExpress: the body was already parsed (express.json() ran first); mount heraldExpress before it or use express.raw({ type: "application/json" }) on this route',
        ),
      );
      return;
    } else raw = readRawBody(req, options.maxBodyBytes);
    raw
      .then((bytes) => receiveDelivery(receive, req.headers, bytes))
      .then((receipt) => writeReceipt(res, receipt), next);
  };
}
