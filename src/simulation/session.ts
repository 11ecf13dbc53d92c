/**
 * The simulated session's state and dice: who the session is, its contacts, the messages it recently sent and
 * received, and the follow-up events due a few steps from now. Scenarios (scenarios.ts) read and feed it.
 */
import type { Random } from '../domain/random.ts';

export interface SimulatedEvent {
  event: string;
  payload: Record<string, unknown>;
}

/** One step of a session: the events it publishes now (it may schedule follow-ups on the session). */
export type Scenario = (s: Session) => SimulatedEvent[];

export type Obj = Record<string, unknown>;
export interface Contact {
  chat: string;
  phone: string;
}

const MIMETYPES = ['image/jpeg', 'image/png', 'audio/ogg; codecs=opus', 'video/mp4', 'application/pdf'];
/** Recent messages kept for reactions, edits and revokes. */
const RECENT = 20;

export class Session {
  readonly random: Random;
  readonly now: () => number;
  readonly me: Contact;
  readonly contacts: Contact[];
  recentIn: Obj[] = [];
  recentOut: Obj[] = [];
  /** Events due a few steps from now: [steps left, event]. */
  #later: [number, SimulatedEvent][] = [];

  constructor(random: Random, now: () => number) {
    this.random = random;
    this.now = now;
    this.me = this.#contact();
    this.contacts = Array.from({ length: 8 }, () => this.#contact());
  }

  /** Publishes `event` after `steps` more steps of activity. */
  schedule(steps: number, event: string, payload: Obj): void {
    this.#later.push([steps, { event, payload }]);
  }

  /** Every follow-up still to come, soonest first, as if their steps had passed. */
  flush(): SimulatedEvent[] {
    const all = this.#later.map(([steps, e], i) => [steps, i, e] as const);
    this.#later = [];
    return all.sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , e]) => e);
  }

  /** The follow-ups due at this step, in the order they were scheduled; the others move a step closer. */
  due(): SimulatedEvent[] {
    const due = this.#later.filter(([steps]) => steps <= 0).map(([, e]) => e);
    this.#later = this.#later.filter(([steps]) => steps > 0).map(([steps, e]) => [steps - 1, e]);
    return due;
  }

  remember(list: Obj[], payload: Obj): void {
    list.push(payload);
    if (list.length > RECENT) list.shift();
  }

  /** A stored file has url, media_id and expires_at; the other statuses have no file. */
  media(status: string): Obj {
    const mimetype = this.pick(MIMETYPES);
    if (status !== 'ready') return { status, mimetype };
    const media_id = `med_${this.hex(26)}`;
    return {
      status,
      mimetype,
      media_id,
      url: `https://media.example.com/files/${media_id}`,
      expires_at: new Date(this.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    };
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  hex(length: number): string {
    let s = '';
    while (s.length < length) s += Math.floor(this.random() * 16).toString(16);
    return s.toUpperCase();
  }

  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  #contact(): Contact {
    const phone = `1555010${String(this.int(0, 9999)).padStart(4, '0')}`;
    return { chat: `${phone}@c.us`, phone };
  }
}
