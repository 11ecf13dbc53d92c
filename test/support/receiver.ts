/** A real HTTP receiver on 127.0.0.1 whose answers a test scripts, recording exactly what arrived. */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  body: any;
  at: number;
}

/** What to answer: a status (with optional headers/body/delay), 'hang' (never answer) or 'reset' (drop the socket). */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | 'hang'
  | 'reset';

export class TestReceiver {
  readonly received: Received[] = [];
  /** Decides the answer to the n-th request (0-based), at once or once a promise settles. Default: 200. */
  answer: (req: Received, n: number) => Answer | Promise<Answer> = () => ({ status: 200 });
  #server: Server;
  #sockets = new Set<Socket>();
  #events = new EventEmitter();
  url = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.#handle(req.headers, Buffer.concat(chunks), res));
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  static async start(path = '/hook'): Promise<TestReceiver> {
    const r = new TestReceiver();
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.#server.address() as AddressInfo).port}${path}`;
    return r;
  }

  #handle(headers: IncomingHttpHeaders, rawBody: Buffer, res: ServerResponse): void {
    let body: unknown = null;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {}
    const req: Received = { headers, rawBody, body, at: Date.now() };
    const n = this.received.length;
    this.received.push(req);
    this.#events.emit('request');
    const answer = this.answer(req, n);
    if (answer instanceof Promise) {
      answer.then(
        (a) => this.#reply(a, res),
        () => res.socket?.destroy(),
      );
      return;
    }
    this.#reply(answer, res);
  }

  #reply(answer: Answer, res: ServerResponse): void {
    if (answer === 'hang') return;
    if (answer === 'reset') {
      res.socket?.destroy();
      return;
    }
    const send = () => {
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    };
    if (answer.delayMs) setTimeout(send, answer.delayMs);
    else send();
  }

  /** Resolves once `count` requests have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.received.length >= count) {
          clearTimeout(timer);
          this.#events.off('request', check);
          resolve(this.received.slice(0, count));
        }
      };
      const timer = setTimeout(() => {
        this.#events.off('request', check);
        reject(new Error(`receiver got ${this.received.length} of ${count} requests within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#events.on('request', check);
      check();
    });
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
