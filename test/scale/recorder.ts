/**
 * A receiver for the scale tests: a real HTTP server on 127.0.0.1 that answers 200 after `holdMs` and records,
 * per request, the event id header and when the request arrived and when its answer was finished. One recorder
 * stands for one webhook, so an event id identifies a delivery.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { HEADERS } from '../../src/domain/signature.ts';

export interface Visit {
  eventId: string;
  start: number;
  end: number;
}

export class Recorder {
  readonly visits: Visit[] = [];
  holdMs: number;
  inFlight = 0;
  maxInFlight = 0;
  url = '';
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();

  private constructor(holdMs: number) {
    this.holdMs = holdMs;
    this.#server = createServer((req, res) => {
      const start = performance.now();
      const eventId = String(req.headers[HEADERS.eventId]);
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          this.inFlight--;
          res.writeHead(200).end();
          this.visits.push({ eventId, start, end: performance.now() });
        }, this.holdMs),
      );
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  static async start(holdMs: number): Promise<Recorder> {
    const r = new Recorder(holdMs);
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.#server.address() as AddressInfo).port}/hook`;
    return r;
  }

  /** Event ids that arrived at least once. */
  eventIds(): Set<string> {
    return new Set(this.visits.map((v) => v.eventId));
  }

  /** Pairs of attempts of one delivery whose time at the receiver overlapped. */
  overlaps(): string[] {
    const byEvent = new Map<string, Visit[]>();
    for (const v of this.visits) byEvent.set(v.eventId, [...(byEvent.get(v.eventId) ?? []), v]);
    const found: string[] = [];
    for (const [id, visits] of byEvent) {
      visits.sort((a, b) => a.start - b.start);
      for (let i = 1; i < visits.length; i++) {
        if (visits[i].start < visits[i - 1].end) found.push(id);
      }
    }
    return found;
  }

  /** The shortest time between the arrivals of two attempts of one delivery (Infinity when none was repeated). */
  shortestRepeat(): { ms: number; eventId: string | null } {
    const starts = new Map<string, number[]>();
    for (const v of this.visits) starts.set(v.eventId, [...(starts.get(v.eventId) ?? []), v.start]);
    let shortest = { ms: Number.POSITIVE_INFINITY, eventId: null as string | null };
    for (const [eventId, list] of starts) {
      list.sort((a, b) => a - b);
      for (let i = 1; i < list.length; i++) {
        if (list[i] - list[i - 1] < shortest.ms) shortest = { ms: list[i] - list[i - 1], eventId };
      }
    }
    return shortest;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
