/**
 * Receivers on 127.0.0.1 that misbehave the ways real ones do, each on its own port (its own origin, so its own
 * connection pool in Herald, as distinct receivers would be). Each counts the requests it got.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hostile {
  url: string;
  requests: number;
  close(): Promise<void>;
}

/** Allocated once: the test process should spend its time serving, not filling buffers. */
const TEN_MB = Buffer.alloc(10 * 1024 * 1024, 'a');

const CHUNK = Buffer.alloc(16 * 1024, 'z');

type Behaviour = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(behaviour: Behaviour): Promise<Hostile> {
  const server: Server = createServer((req, res) => {
    h.requests++;
    req.resume();
    req.on('end', () => behaviour(req, res));
  });
  const h: Hostile = {
    url: '',
    requests: 0,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return h;
}

/** Writes `chunk` every `everyMs` until the connection closes (Herald cut it). */
function drip(res: ServerResponse, chunk: Buffer | string, everyMs: number): void {
  const timer = setInterval(() => res.write(chunk), everyMs);
  res.on('close', () => clearInterval(timer));
}

export const hostile = {
  /** Reads the request and never answers. */
  hang: () => serve(() => {}),
  /** Drops the connection instead of answering. */
  reset: () => serve((req) => req.socket.destroy()),
  /** 200 and headers at once, then the body one byte every 100 ms, for ever. */
  trickle: () =>
    serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      drip(res, 'x', 100);
    }),
  /** 200 with a 10 MB body, sent as fast as the reader takes it. */
  big: () =>
    serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(TEN_MB.length) });
      res.end(TEN_MB);
    }),
  /** 200, then 16 KiB every 25 ms without end. */
  forever: () =>
    serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      drip(res, CHUNK, 25);
    }),
  /** A redirect to `location` (a private address that must never be reached). */
  redirect: (location: string) =>
    serve((_req, res) => {
      res.writeHead(302, { location });
      res.end();
    }),
  /** An honest receiver. */
  ok: () => serve((_req, res) => res.end('ok')),
};
