/**
 * WAHA's webhook sender as its source and documentation describe it, written here for tests (none of WAHA's code is
 * in this repository): one POST per event of the body's exact bytes, `Content-Type: application/json`, the webhook's
 * custom headers (Herald's bearer key goes there), `X-Webhook-Request-Id` (a UUID per event, the same on every retry),
 * `X-Webhook-Timestamp` (ms), and with an HMAC key `X-Webhook-Hmac` (hex HMAC-SHA512 of the raw body) with
 * `X-Webhook-Hmac-Algorithm: sha512`. Any answer but a 2xx, or none, is retried with the same request id and bytes:
 * 15 attempts 2 s apart by default (`retries.attempts`, `retries.delaySeconds`).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';

export interface WahaSenderOptions {
  url: string;
  headers: Record<string, string>;
  hmacKey?: string;
  attempts?: number;
  delayMs?: number;
  /** Test hook: the answer to these attempt numbers (1-based) of an event never reaches WAHA, as if lost. */
  loseAnswer?: (attempt: number, body: string) => boolean;
}

export interface SendRecord {
  requestId: string;
  /** Each attempt's status, or 'lost'. */
  answers: (number | 'lost')[];
  /** The last 2xx answer's body. */
  accepted: Record<string, unknown> | null;
}

export class WahaSender {
  readonly #o: Required<Omit<WahaSenderOptions, 'hmacKey'>> & { hmacKey?: string };

  constructor(o: WahaSenderOptions) {
    this.#o = { attempts: 15, delayMs: 2000, loseAnswer: () => false, ...o };
  }

  async send(envelope: Record<string, unknown>): Promise<SendRecord> {
    const raw = JSON.stringify(envelope);
    const record: SendRecord = { requestId: randomUUID(), answers: [], accepted: null };
    for (let attempt = 1; attempt <= this.#o.attempts; attempt++) {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        ...this.#o.headers,
        'x-webhook-request-id': record.requestId,
        'x-webhook-timestamp': String(Date.now()),
      };
      if (this.#o.hmacKey !== undefined) {
        headers['x-webhook-hmac'] = createHmac('sha512', this.#o.hmacKey).update(raw).digest('hex');
        headers['x-webhook-hmac-algorithm'] = 'sha512';
      }
      const res = await request(this.#o.url, { method: 'POST', headers, body: raw });
      const text = await res.body.text();
      if (this.#o.loseAnswer(attempt, raw)) record.answers.push('lost');
      else {
        record.answers.push(res.statusCode);
        if (res.statusCode >= 200 && res.statusCode < 300) {
          record.accepted = JSON.parse(text);
          return record;
        }
      }
      await new Promise((r) => setTimeout(r, this.#o.delayMs));
    }
    return record;
  }
}
