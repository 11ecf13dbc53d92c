/**
 * A small stand-in for WAHA's file server, for `herald simulate --engine waha`: serves a file for any name under
 * /api/files/, and under /api/files/large/ a body that never ends (Herald stops at its size limit). When given an
 * API key it answers 401 without it, as WAHA does, so ENGINE_MEDIA_HEADERS can be tried.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const TYPES: Record<string, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  mp4: 'video/mp4',
  pdf: 'application/pdf',
};
/** Size of every file but the endless ones (the bench's EM names it in its title). */
export const FILE_BYTES = 24 * 1024;

export interface MediaServerStats {
  served: number;
  refused: number;
}

export class MediaServer {
  readonly stats: MediaServerStats = { served: 0, refused: 0 };
  readonly #server: Server;
  base = '';

  private constructor(apiKey: string | null) {
    this.#server = createServer((req, res) => {
      if (apiKey !== null && req.headers['x-api-key'] !== apiKey) {
        this.stats.refused++;
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Unauthorized"}');
        return;
      }
      const path = decodeURIComponent((req.url ?? '/').split('?')[0]);
      if (!path.startsWith('/api/files/')) return void res.writeHead(404).end();
      this.stats.served++;
      const type = TYPES[path.split('.').pop() ?? ''] ?? 'audio/ogg';
      if (path.startsWith('/api/files/large/')) return endless(res, type);
      // The same bytes for the same name, so a download can be checked against another.
      const seed = createHash('sha256').update(path).digest();
      const body = Buffer.alloc(FILE_BYTES, seed);
      res.writeHead(200, { 'content-type': type, 'content-length': String(body.length) }).end(body);
    });
  }

  static async start(apiKey: string | null, port = 0): Promise<MediaServer> {
    const server = new MediaServer(apiKey);
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject).listen(port, '127.0.0.1', resolve);
    });
    server.base = `http://127.0.0.1:${(server.#server.address() as AddressInfo).port}`;
    return server;
  }

  fileUrl(name: string, large: boolean): string {
    return `${this.base}/api/files/${large ? 'large/' : ''}${encodeURIComponent(name)}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

function endless(res: import('node:http').ServerResponse, type: string): void {
  res.writeHead(200, { 'content-type': type });
  const chunk = Buffer.alloc(64 * 1024, 7);
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) {}
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}
