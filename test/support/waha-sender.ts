/**
 * WAHA's webhook sender as its source (release 2026.2.1) and documentation describe it, written here for tests (none
 * of WAHA's code is in this repository):
 * - every event is posted the moment it happens, without waiting for any other: a burst is as many requests at
 *   once as there are events, each on a connection of its own (WAHA's keep-alive agent opens a socket for every
 *   request in flight), so Herald sees them arrive, and commit, in any order;
 * - one POST of the body's exact bytes, `Content-Type: application/json`, `User-Agent: WAHA/<version>`, the
 *   webhook's custom headers (Herald's bearer key goes there), `X-Webhook-Request-Id` (a 17-character `uniqid`
 *   made once per event), `X-Webhook-Timestamp` (the envelope's own timestamp, ms) and, with an HMAC key,
 *   `X-Webhook-Hmac` (hex HMAC-SHA512 of the raw body) with `X-Webhook-Hmac-Algorithm: sha512`;
 * - any answer but a 2xx, and a connection that fails, are retried with the same request id, timestamp and bytes:
 *   1 + 15 retries (`retries.attempts` counts the retries), 2 s apart by default (`retries.delaySeconds`);
 * - no timeout: a request Herald has taken and not answered is waited for, never sent again.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Client } from 'undici';

export interface WahaSenderOptions {
  url: string;
  headers: Record<string, string>;
  hmacKey?: string;
  /** Retries after the first attempt (WAHA's `retries.attempts`, default 15). */
  retries?: number;
  /** Between attempts (WAHA's `retries.delaySeconds`, default 2 s); tests make it short. */
  delayMs?: number;
  /**
   * Test hook: the connection of this attempt (1-based) breaks after Herald answered and before the answer reaches
   * WAHA, which WAHA sees as a failed request and retries.
   */
  loseAnswer?: (attempt: number, body: string) => boolean;
}

export interface SendRecord {
  requestId: string;
  /** Each attempt's status, 'lost' (the answer lost on the way) or 'failed' (the connection failed). */
  answers: (number | 'lost' | 'failed')[];
  /** The 2xx answer's body. */
  accepted: Record<string, unknown> | null;
}

export const WAHA_VERSION = '2026.2.1';

export class WahaSender {
  readonly #o: Required<Omit<WahaSenderOptions, 'hmacKey'>> & { hmacKey?: string };
  readonly #ids = uniqid();

  constructor(o: WahaSenderOptions) {
    this.#o = { retries: 15, delayMs: 2000, loseAnswer: () => false, ...o };
  }

  /** Every event at once, as WAHA emits a burst: resolves when each has been accepted or given up. */
  sendAll(envelopes: Record<string, unknown>[]): Promise<SendRecord[]> {
    return Promise.all(envelopes.map((e) => this.send(e)));
  }

  /** One event, on a connection of its own, with its retries. */
  async send(envelope: Record<string, unknown>): Promise<SendRecord> {
    const raw = JSON.stringify(envelope);
    const record: SendRecord = { requestId: this.#ids(), answers: [], accepted: null };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': `WAHA/${WAHA_VERSION}`,
      ...this.#o.headers,
      'x-webhook-request-id': record.requestId,
      'x-webhook-timestamp': String(envelope.timestamp ?? Date.now()),
    };
    if (this.#o.hmacKey !== undefined) {
      headers['x-webhook-hmac'] = createHmac('sha512', this.#o.hmacKey).update(raw).digest('hex');
      headers['x-webhook-hmac-algorithm'] = 'sha512';
    }
    const url = new URL(this.#o.url);
    const connection = new Client(url.origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
    try {
      for (let attempt = 1; attempt <= 1 + this.#o.retries; attempt++) {
        if (attempt > 1) await new Promise((r) => setTimeout(r, this.#o.delayMs));
        const answer = await connection
          .request({ method: 'POST', path: url.pathname + url.search, headers, body: raw })
          .then(async (res) => ({ status: res.statusCode, text: await res.body.text() }))
          .catch(() => null);
        if (answer === null) {
          record.answers.push('failed');
          continue;
        }
        if (this.#o.loseAnswer(attempt, raw)) {
          record.answers.push('lost');
          continue;
        }
        record.answers.push(answer.status);
        if (answer.status >= 200 && answer.status < 300) {
          record.accepted = JSON.parse(answer.text);
          return record;
        }
      }
      return record;
    } finally {
      await connection.close().catch(() => {});
    }
  }
}

/**
 * Request ids as WAHA's `uniqid` makes them: 17 characters of [0-9a-z], a part naming the process (its machine
 * and pid) and the time in ms in base 36, one more than the last id's when two come in the same millisecond.
 */
function uniqid(): () => string {
  const processPart = [...randomBytes(9)].map((b) => (b % 36).toString(36)).join('');
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return processPart + last.toString(36).padStart(8, '0');
  };
}
