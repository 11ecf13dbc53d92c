/**
 * Ordered delivery per chat, as a receiver sees it: a real HTTP receiver on 127.0.0.1 that answers each chat's
 * requests as a test scripts (succeed, fail, hang until Herald gives up, or wait for the test), and records when each
 * request began and ended, so that a test can check the two rules a receiver relies on: a chat's requests never
 * overlap in time, and its first successful arrivals are in the order its events were accepted.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What a request of a chat gets: 200, 503, no answer (Herald times out), or what a promise settles to. */
export type ChatAnswer = 'ok' | 'fail' | 'hang' | Promise<'ok' | 'fail'>;

export interface ChatRequest {
  chat: string;
  event_id: string;
  start: number;
  /** When the answer was sent, or the connection closed without one; null while open. */
  end: number | null;
  ok: boolean;
}

export class ChatReceiver {
  readonly requests: ChatRequest[] = [];
  /** The answer to a chat's request; `n` counts that chat's requests so far (0-based). */
  answer: (chat: string, event_id: string, n: number) => ChatAnswer = () => 'ok';
  url = '';
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #perChat = new Map<string, number>();

  private constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const chat = String(body.payload.from);
        const n = this.#perChat.get(chat) ?? 0;
        this.#perChat.set(chat, n + 1);
        const r: ChatRequest = {
          chat,
          event_id: body.event_id,
          start: performance.now(),
          end: null,
          ok: false,
        };
        this.requests.push(r);
        res.on('close', () => {
          r.end ??= performance.now();
        });
        const reply = (a: 'ok' | 'fail') => {
          if (res.destroyed) return;
          r.ok = a === 'ok';
          r.end = performance.now();
          res.writeHead(a === 'ok' ? 200 : 503).end();
        };
        const a = this.answer(chat, body.event_id, n);
        if (a === 'hang') return;
        if (a instanceof Promise) a.then(reply, () => res.destroy());
        else reply(a);
      });
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  static async start(): Promise<ChatReceiver> {
    const r = new ChatReceiver();
    await new Promise<void>((resolve) => r.#server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.#server.address() as AddressInfo).port}/chats`;
    return r;
  }

  /** The event ids that arrived with a 200 at least once. */
  delivered(): Set<string> {
    return new Set(this.requests.filter((r) => r.ok).map((r) => r.event_id));
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A message of `chat` (a chat id such as `49170…@c.us`), numbered `n`: its id carries the chat, as WAHA's do. */
export const chatMessage = (chat: string, n: number) => ({
  event: 'message',
  payload: { id: `false_${chat}_M${n}`, from: chat, fromMe: false, body: `#${n}`, hasMedia: false },
});

/**
 * The two rules, for every chat of `accepted` (each chat's event ids in the order they were acknowledged): no two
 * of its requests overlap in time, and its first successful arrivals follow that order. Returns how many requests
 * were checked.
 */
export function assertChatOrder(receiver: ChatReceiver, accepted: Map<string, string[]>): number {
  let checked = 0;
  for (const [chat, order] of accepted) {
    const mine = receiver.requests.filter((r) => r.chat === chat);
    for (let i = 1; i < mine.length; i++) {
      const before = mine[i - 1];
      assert.ok(before.end !== null, `${chat}: request ${i - 1} still open when request ${i} began`);
      assert.ok(
        mine[i].start >= before.end,
        `${chat}: request ${i} (${mine[i].event_id}) began ${(before.end - mine[i].start).toFixed(1)} ms before ` +
          `request ${i - 1} (${before.event_id}) ended`,
      );
    }
    const firsts: string[] = [];
    for (const r of mine) if (r.ok && !firsts.includes(r.event_id)) firsts.push(r.event_id);
    const expected = order.filter((id) => firsts.includes(id));
    assert.deepEqual(firsts, expected, `${chat}: first successful arrivals out of ingest order`);
    checked += mine.length;
  }
  return checked;
}

/** A small deterministic generator, so that a failing run can be replayed from its seed. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
