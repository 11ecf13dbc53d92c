/**
 * One request and its answer, as undici's dispatch handler: the status, Retry-After and the first 4 KiB of the
 * body are kept, the rest is dropped as it streams. Settled once — by the answer's end, an error, or its deadline,
 * whichever comes first. A handler of our own rather than undici's `request()`: that wraps every answer in a
 * Readable stream, an abort-signal listener and an async resource, a sixth of the sender thread's time per request.
 */
import type { Dispatcher } from 'undici';
import type { Expiring } from './deadlines.ts';

export const RESPONSE_BODY_KEPT = 4096;

const timeoutError = () => new DOMException('the delivery timeout elapsed', 'TimeoutError');

export type Reply =
  | { status_code: number; response_body: string | null; retry_after: string | null }
  | { error: unknown };

export class Exchange implements Dispatcher.DispatchHandler, Expiring {
  readonly #settle: (reply: Reply | 'timeout') => void;
  #controller: Dispatcher.DispatchController | null = null;
  #settled = false;
  #status = 0;
  #retryAfter: string | null = null;
  #kept: Buffer[] = [];
  #size = 0;

  constructor(settle: (reply: Reply | 'timeout') => void) {
    this.#settle = settle;
  }

  /** The deadline passed: settled as a timeout now, and the request aborted as soon as undici lets it be. */
  expire(): void {
    if (this.#settled) return;
    this.#done('timeout');
    this.#controller?.abort(timeoutError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Expired while waiting for a connection: it never goes out.
    if (this.#settled) controller.abort(timeoutError());
  }

  onResponseStart(
    _: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, unknown>,
  ): void {
    if (statusCode < 200) return; // 1xx: informational, the answer follows
    this.#status = statusCode;
    const retryAfter = headers['retry-after'];
    this.#retryAfter = typeof retryAfter === 'string' ? retryAfter : null;
  }

  onResponseData(_: Dispatcher.DispatchController, chunk: Buffer): void {
    // A copy, not a view: a view would pin the whole (up to 64 KiB) chunk until the attempt is logged.
    if (this.#size < RESPONSE_BODY_KEPT)
      this.#kept.push(Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - this.#size)));
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    const body = this.#kept.length ? Buffer.concat(this.#kept).toString('utf8') : null;
    this.#done({ status_code: this.#status, response_body: body, retry_after: this.#retryAfter });
  }

  onResponseError(_: Dispatcher.DispatchController | null, error: Error): void {
    this.#done({ error });
  }

  #done(answer: Reply | 'timeout'): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#kept = [];
    this.#settle(answer);
  }
}
