/**
 * Evolution API's webhook sender as its source (release 2.3.6) describes it, written here for tests (none of
 * Evolution's code is in this repository): src/api/integrations/event/webhook/webhook.controller.ts, emit() and
 * retryWebhookRequest(), and the channels' sendDataWebhook() calls, most of which are not awaited.
 * - every event is posted the moment it happens (fire and forget): a burst is as many requests at once;
 * - only the instance webhook's `events` are sent (Evolution's names: MESSAGES_UPSERT…), to `url`, or with `byEvents`
 *   to `url/<event in lower case, dashes>` (`messages-upsert`; a url ending in `/` gives `…//messages-upsert`);
 * - one axios POST of `{ event, instance, data, destination, date_time, sender, server_url, apikey }` as JSON
 *   (`undefined` fields dropped), with axios's headers and the webhook's `headers`; a `jwt_key` among them is not
 *   sent but replaced by `Authorization: Bearer <JWT>`, HS256 over `{ iat, exp: iat + 600, app: 'evolution',
 *   action: 'webhook' }` signed with it (jsonwebtoken);
 * - timeout WEBHOOK_REQUEST_TIMEOUT_MS (30 s); a failure is tried again, up to WEBHOOK_RETRY_MAX_ATTEMPTS (10)
 *   attempts in all, waiting WEBHOOK_RETRY_INITIAL_DELAY_SECONDS (5) doubled each time up to
 *   WEBHOOK_RETRY_MAX_DELAY_SECONDS (300), ±WEBHOOK_RETRY_JITTER_FACTOR (0.2) and never under the first delay;
 * - an answer of 400, 401, 403, 404 or 422 (WEBHOOK_RETRY_NON_RETRYABLE_STATUS_CODES) is not retried; any other
 *   non-2xx, a timeout or a failed connection is. After the last attempt the event is dropped (logged).
 */
import { createHmac } from 'node:crypto';
import { Client } from 'undici';
import { apiRequest, type Reply } from './herald.ts';

export interface EvolutionWebhook {
  /** The instance webhook's `url`. */
  url: string;
  /** `webhook_by_events` / `byEvents`. */
  byEvents?: boolean;
  /** `headers`; `jwt_key` becomes a bearer JWT. */
  headers?: Record<string, string>;
  /** `events`, in Evolution's names (MESSAGES_UPSERT…); empty: EVENT_SETTINGS, as Evolution's set() fills it. */
  events?: string[];
}

export interface EvolutionSenderOptions extends EvolutionWebhook {
  /** Evolution's defaults: 10 attempts, 5 s first delay, 300 s at most, jitter 0.2; tests make them short. */
  maxAttempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  jitterFactor?: number;
  nonRetryable?: number[];
  timeoutMs?: number;
  /** Math.random, for the jitter. */
  random?: () => number;
  /** Evolution's clock, for the JWT's iat and exp (seconds from it). */
  now?: () => number;
  /** Test hook: the answer to this attempt (1-based) is lost on the way back, which Evolution sees as a failure. */
  loseAnswer?: (attempt: number, body: string) => boolean;
}

export interface EvolutionSend {
  url: string;
  /** Each attempt's status, 'lost' (the answer lost on the way) or 'failed' (no answer). */
  answers: (number | 'lost' | 'failed')[];
  /** The 2xx answer's body. */
  accepted: Record<string, any> | null;
  /** Given up: a status not retried, or the last attempt failed. */
  dropped: boolean;
}

/**
 * The names Evolution's webhook settings accept (EventController.events), which an empty list stands for. It says
 * GROUP_UPDATE where the sender looks for GROUPS_UPDATE (groups.update), so Evolution 2.3 never posts groups.update
 * to an instance webhook.
 */
export const EVENT_SETTINGS = [
  'APPLICATION_STARTUP',
  'QRCODE_UPDATED',
  'MESSAGES_SET',
  'MESSAGES_UPSERT',
  'MESSAGES_EDITED',
  'MESSAGES_UPDATE',
  'MESSAGES_DELETE',
  'SEND_MESSAGE',
  'SEND_MESSAGE_UPDATE',
  'CONTACTS_SET',
  'CONTACTS_UPSERT',
  'CONTACTS_UPDATE',
  'PRESENCE_UPDATE',
  'CHATS_SET',
  'CHATS_UPSERT',
  'CHATS_UPDATE',
  'CHATS_DELETE',
  'GROUPS_UPSERT',
  'GROUP_UPDATE',
  'GROUP_PARTICIPANTS_UPDATE',
  'CONNECTION_UPDATE',
  'LABELS_EDIT',
  'LABELS_ASSOCIATION',
  'CALL',
  'TYPEBOT_START',
  'TYPEBOT_CHANGE_STATUS',
  'REMOVE_INSTANCE',
  'LOGOUT_INSTANCE',
  'INSTANCE_CREATE',
  'INSTANCE_DELETE',
  'STATUS_INSTANCE',
];

/** Evolution's event name as its sender compares it with the settings, and as its byEvents path writes it. */
export const settingName = (event: string) => event.replace(/[.-]/g, '_').toUpperCase();
export const pathName = (event: string) => settingName(event).replace(/_/g, '-').toLowerCase();

/** jsonwebtoken's HS256 token, as generateJwtToken() signs it. */
export function evolutionJwt(key: string, nowMs: number, claims: Record<string, unknown> = {}): string {
  const iat = Math.floor(nowMs / 1000);
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iat, exp: iat + 600, app: 'evolution', action: 'webhook', ...claims })}`;
  return `${head}.${createHmac('sha256', key).update(head).digest('base64url')}`;
}

export class EvolutionSender {
  readonly #o: Required<Omit<EvolutionSenderOptions, 'byEvents' | 'headers' | 'events'>> & EvolutionWebhook;

  constructor(o: EvolutionSenderOptions) {
    this.#o = {
      maxAttempts: 10,
      initialDelayMs: 5000,
      maxDelayMs: 300_000,
      jitterFactor: 0.2,
      nonRetryable: [400, 401, 403, 404, 422],
      timeoutMs: 30_000,
      random: Math.random,
      now: Date.now,
      loseAnswer: () => false,
      ...o,
    };
  }

  /** Every body at once, as Evolution's channels emit: resolves when each was accepted or dropped. */
  sendAll(bodies: Record<string, unknown>[]): Promise<(EvolutionSend | null)[]> {
    return Promise.all(bodies.map((b) => this.send(b)));
  }

  /** One body with its retries; null when the webhook's events leave it out (not sent). */
  async send(body: Record<string, unknown>): Promise<EvolutionSend | null> {
    const event = String(body.event);
    const events = this.#o.events?.length ? this.#o.events : EVENT_SETTINGS;
    if (!events.includes(settingName(event))) return null;
    const url = this.#o.byEvents ? `${this.#o.url}/${pathName(event)}` : this.#o.url;
    const raw = JSON.stringify(body);
    const headers: Record<string, string> = {
      accept: 'application/json, text/plain, */*',
      'content-type': 'application/json',
      'user-agent': 'axios/1.7.9',
    };
    for (const [name, value] of Object.entries(this.#o.headers ?? {})) {
      if (name === 'jwt_key') headers.authorization = `Bearer ${evolutionJwt(value, this.#o.now())}`;
      else headers[name] = value;
    }
    const record: EvolutionSend = { url, answers: [], accepted: null, dropped: false };
    const target = new URL(url);
    for (let attempt = 1; attempt <= this.#o.maxAttempts; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, this.#delay(attempt - 1)));
      const answer = await this.#post(target, headers, raw);
      if (answer !== null && this.#o.loseAnswer(attempt, raw)) {
        record.answers.push('lost');
        continue;
      }
      record.answers.push(answer?.status ?? 'failed');
      if (answer === null) continue;
      if (answer.status >= 200 && answer.status < 300) {
        record.accepted = JSON.parse(answer.text);
        return record;
      }
      if (this.#o.nonRetryable.includes(answer.status)) break;
    }
    record.dropped = true;
    return record;
  }

  /** The wait after the n-th failed attempt (retryWebhookRequest's arithmetic). */
  #delay(failures: number): number {
    const { initialDelayMs, maxDelayMs, jitterFactor, random } = this.#o;
    const next = Math.min(initialDelayMs * 2 ** (failures - 1), maxDelayMs);
    return Math.max(initialDelayMs, next + next * jitterFactor * (random() * 2 - 1));
  }

  /** axios's default agent keeps no connection alive: each attempt on a connection of its own. */
  async #post(url: URL, headers: Record<string, string>, raw: string) {
    const connection = new Client(url.origin, {
      headersTimeout: this.#o.timeoutMs,
      bodyTimeout: this.#o.timeoutMs,
    });
    try {
      const res = await connection.request({
        method: 'POST',
        path: url.pathname + url.search,
        headers,
        body: raw,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch {
      return null;
    } finally {
      await connection.close().catch(() => {});
    }
  }
}

/** One body posted to an instance's engine endpoint (`path` after …/engine/evolution), answered as parsed JSON. */
export function postEvolution(
  base: string,
  ins: string,
  body: unknown,
  o: { key?: string | null; path?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const path = `/instances/${ins}/engine/evolution${o.path ?? ''}`;
  return apiRequest(base, 'POST', path, { rawBody: JSON.stringify(body), key: o.key, headers: o.headers });
}
