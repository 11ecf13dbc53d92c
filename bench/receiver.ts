/**
 * A receiver process: `fast` answers 200 with an empty body once the whole request has arrived, as a real receiver
 * needs the body before answering; `hang` reads the request and never answers (a dead receiver: Herald's timeout
 * ends each attempt). It counts arrivals, and while tracking keeps each event id's first arrival time, so that the
 * bench can compute publish→arrival latencies.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEADERS } from '../src/domain/signature.ts';
import { Child, serveParent } from './ipc.ts';
import { wallNow } from './payloads.ts';

export interface Arrivals {
  count: number;
  firstAt: number;
  lastAt: number;
}

export class Receiver {
  readonly #child: Child;
  url = '';

  constructor(mode: 'fast' | 'hang') {
    this.#child = new Child(import.meta.filename, [mode]);
  }

  async start(): Promise<this> {
    const { port } = (await this.#child.ready) as { port: number };
    this.url = `http://127.0.0.1:${port}/`;
    return this;
  }

  /** Counts from zero again; with `track`, also keeps each event id's arrival time until the next reset. */
  reset(track = false): Promise<Arrivals> {
    return this.#child.call('reset', track);
  }

  arrivals(): Promise<Arrivals> {
    return this.#child.call('arrivals');
  }

  /** [event id, arrival time] of every tracked event, first arrival only. */
  tracked(): Promise<[string, number][]> {
    return this.#child.call('tracked');
  }

  stop(): Promise<void> {
    return this.#child.stop(1000);
  }
}

function main(mode: string): void {
  let arrivals: Arrivals = { count: 0, firstAt: 0, lastAt: 0 };
  let tracked: Map<string, number> | null = null;
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      const at = wallNow();
      arrivals.count++;
      if (arrivals.firstAt === 0) arrivals.firstAt = at;
      arrivals.lastAt = at;
      const id = req.headers[HEADERS.eventId];
      if (tracked && typeof id === 'string' && !tracked.has(id)) tracked.set(id, at);
      if (mode === 'fast') res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  // Keep-alive sockets stay open as long as Herald's agent keeps them (30 s).
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    serveParent(
      { port: (server.address() as AddressInfo).port },
      {
        reset: (track) => {
          const before = arrivals;
          arrivals = { count: 0, firstAt: 0, lastAt: 0 };
          tracked = track ? new Map() : null;
          return before;
        },
        arrivals: () => arrivals,
        tracked: () => [...(tracked ?? [])],
      },
    );
  });
}

if (import.meta.main) main(process.argv[2]);
