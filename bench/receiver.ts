/**
 * A receiver process: `fast` answers 200 with an empty body once the whole request has arrived, as a real receiver
 * needs the body before answering; `hang` reads the request and never answers (a dead receiver: Herald's timeout
 * ends each attempt). It counts arrivals, and while tracking keeps each event id's first arrival time at each path
 * (a webhook of its own), so that the bench can compute publish→arrival latencies. While inspecting (EM only: it
 * costs the receiver a JSON.parse per delivery) it also counts the deliveries by `payload.media.status`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HEADERS } from '../src/domain/signature.ts';
import { Child, serveParent } from './ipc.ts';
import { wallNow } from './payloads.ts';
import { progress } from './stats.ts';

/** A phase that makes no progress for this long has hung: fail rather than wait forever. */
const STALL_MS = 60_000;

export interface Arrivals {
  count: number;
  firstAt: number;
  lastAt: number;
}

export class Receiver {
  readonly #child: Child;
  url = '';

  /** `host`: the address it listens on (the scale bench's is on its own network, not loopback). */
  constructor(mode: 'fast' | 'hang', host = '127.0.0.1') {
    this.#child = new Child(import.meta.filename, [mode, host]);
  }

  async start(): Promise<this> {
    const { host, port } = (await this.#child.ready) as { host: string; port: number };
    this.url = `http://${host}:${port}/`;
    return this;
  }

  get pid(): number {
    return this.#child.pid;
  }

  /**
   * Counts from zero again; with `track`, also keeps each event id's arrival time until the next reset; with
   * `inspect`, also counts deliveries by media status.
   */
  reset(track = false, inspect = false): Promise<Arrivals> {
    return this.#child.call('reset', { track, inspect });
  }

  /** Deliveries since the last reset by `payload.media.status` ("none": no media), when inspecting. */
  mediaStatuses(): Promise<Record<string, number>> {
    return this.#child.call('mediaStatuses');
  }

  arrivals(): Promise<Arrivals> {
    return this.#child.call('arrivals');
  }

  /** [event id, arrival time] of every tracked event, its first arrival at each path only. */
  tracked(): Promise<[string, number][]> {
    return this.#child.call('tracked');
  }

  stop(): Promise<void> {
    return this.#child.stop(1000);
  }
}

/** Polls the receiver (progress line, stall check) until `count` requests arrived; fails as soon as `work` does. */
export async function waitForArrivals(
  receiver: Receiver,
  count: number,
  label: () => string,
  work?: Promise<unknown>,
): Promise<Arrivals> {
  let failed: unknown = null;
  work?.catch((err) => {
    failed = err;
  });
  let [seen, movedAt] = [-1, Date.now()];
  for (;;) {
    const { count: arrived } = await receiver.arrivals();
    progress(`${label()}, ${arrived.toLocaleString('en-US')}/${count.toLocaleString('en-US')} arrived`);
    if (failed) throw failed;
    if (arrived >= count) return receiver.arrivals();
    if (arrived !== seen) [seen, movedAt] = [arrived, Date.now()];
    else if (Date.now() - movedAt > STALL_MS) throw new Error(`no arrival for ${STALL_MS} ms at ${arrived}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function main(mode: string, host: string): void {
  let arrivals: Arrivals = { count: 0, firstAt: 0, lastAt: 0 };
  /** By path and event id: one event delivered to 50 webhooks arrives 50 times, each a delivery of its own. */
  let tracked: Map<string, [string, number]> | null = null;
  let media: Record<string, number> | null = null;
  const server = createServer((req, res) => {
    const chunks: Buffer[] | null = media ? [] : null;
    if (chunks) req.on('data', (chunk: Buffer) => chunks.push(chunk));
    else req.resume();
    req.on('end', () => {
      const at = wallNow();
      if (chunks && media) countMedia(media, Buffer.concat(chunks));
      arrivals.count++;
      if (arrivals.firstAt === 0) arrivals.firstAt = at;
      arrivals.lastAt = at;
      const id = req.headers[HEADERS.eventId];
      const key = `${req.url} ${id}`;
      if (tracked && typeof id === 'string' && !tracked.has(key)) tracked.set(key, [id, at]);
      if (mode === 'fast') res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  // Keep-alive sockets stay open as long as Herald's agent keeps them (30 s).
  server.keepAliveTimeout = 60_000;
  server.listen(0, host, () => {
    serveParent(
      { host, port: (server.address() as AddressInfo).port },
      {
        reset: (arg) => {
          const { track, inspect } = arg as { track: boolean; inspect: boolean };
          const before = arrivals;
          arrivals = { count: 0, firstAt: 0, lastAt: 0 };
          tracked = track ? new Map() : null;
          media = inspect ? {} : null;
          return before;
        },
        arrivals: () => arrivals,
        tracked: () => [...(tracked?.values() ?? [])],
        mediaStatuses: () => media ?? {},
      },
    );
  });
}

/** One more delivery of its media's status; a body that is not Herald's JSON counts as "unreadable". */
function countMedia(counts: Record<string, number>, body: Buffer): void {
  let status = 'unreadable';
  try {
    status = JSON.parse(body.toString('utf8')).payload?.media?.status ?? 'none';
  } catch {}
  counts[status] = (counts[status] ?? 0) + 1;
}

if (import.meta.main) main(process.argv[2], process.argv[3]);
