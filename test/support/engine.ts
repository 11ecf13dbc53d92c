/**
 * The engine side of the engine-traffic tests: WAHA's webhook body as WAHA builds it, posted (and signed) as WAHA
 * posts it, and a real file server on 127.0.0.1 standing in for WAHA's, whose answers a test scripts.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { apiRequest, type Reply } from './herald.ts';

/** A WAHA envelope around `payload`: a fresh evt_ id (lower-case ULID-like), the time in ms, the engine's fields. */
export function wahaBody(
  event: string,
  payload: unknown,
  extra: Record<string, unknown> = {},
): Record<string, any> {
  return {
    id: `evt_${randomBytes(13).toString('hex').slice(0, 26)}`,
    timestamp: Date.now(),
    event,
    session: 'default',
    metadata: { 'user.id': '123' },
    me: { id: '15550001111@c.us', pushName: 'Shop' },
    payload,
    engine: 'NOWEB',
    environment: { version: '2025.1.1', engine: 'NOWEB', tier: 'CORE', browser: null },
    ...extra,
  };
}

export interface PostOptions {
  /** Signs the exact body as WAHA does (X-Webhook-Hmac, X-Webhook-Hmac-Algorithm: sha512). */
  hmacKey?: string;
  headers?: Record<string, string>;
  key?: string | null;
}

/** POSTs the body's exact bytes to the engine endpoint, as WAHA's webhook sender does. */
export async function postWaha(
  base: string,
  ins: string,
  body: unknown,
  o: PostOptions = {},
): Promise<Reply> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { ...o.headers };
  if (o.hmacKey !== undefined) {
    headers['x-webhook-hmac'] = createHmac('sha512', o.hmacKey).update(raw).digest('hex');
    headers['x-webhook-hmac-algorithm'] = 'sha512';
  }
  return apiRequest(base, 'POST', `/instances/${ins}/engine/waha`, { rawBody: raw, key: o.key, headers });
}

/** How the file server answers a path: bytes, a status, a body that never ends, or nothing at all. */
export type FileAnswer =
  | { bytes: Buffer; type?: string; sendLength?: boolean }
  | { status: number }
  | { endless: true; chunk: number }
  | 'hang';

export interface FileRequest {
  path: string;
  headers: IncomingHttpHeaders;
}

/** WAHA's file server, as far as Herald sees it: GET /api/files/<name>. */
export class EngineFiles {
  readonly requests: FileRequest[] = [];
  readonly #answers = new Map<string, FileAnswer>();
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  base = '';

  private constructor() {
    this.#server = createServer((req, res) => {
      const path = req.url ?? '/';
      this.requests.push({ path, headers: req.headers });
      const answer = this.#answers.get(path) ?? { status: 404 };
      if (answer === 'hang') return;
      if ('status' in answer) {
        res.writeHead(answer.status).end('no');
      } else if ('endless' in answer) {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        const chunk = Buffer.alloc(answer.chunk, 1);
        const pump = () => {
          while (res.write(chunk)) {}
          res.once('drain', pump);
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
      } else {
        const headers: Record<string, string> = { 'content-type': answer.type ?? 'application/octet-stream' };
        if (answer.sendLength !== false) headers['content-length'] = String(answer.bytes.length);
        res.writeHead(200, headers).end(answer.bytes);
      }
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  static async start(): Promise<EngineFiles> {
    const f = new EngineFiles();
    await new Promise<void>((resolve) => f.#server.listen(0, '127.0.0.1', resolve));
    f.base = `http://127.0.0.1:${(f.#server.address() as AddressInfo).port}`;
    return f;
  }

  /** Where it serves its files: what ENGINE_MEDIA_PREFIXES names for it. */
  get prefix(): string {
    return `${this.base}/api/files/`;
  }

  /** Serves `answer` at /api/files/<name>; returns its URL. */
  serve(name: string, answer: FileAnswer): string {
    const path = `/api/files/${name}`;
    this.#answers.set(path, answer);
    return this.base + path;
  }

  requestsFor(url: string): FileRequest[] {
    const path = new URL(url).pathname;
    return this.requests.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
