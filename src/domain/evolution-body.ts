/**
 * Evolution API's event body, as Evolution posts it to an instance's webhook (and publishes it to a queue):
 * `{ event, instance, data, destination, date_time, sender, server_url, apikey }`, read into the events Herald
 * publishes. Pure: whoever takes the body (the engine endpoint, a source) stores the file Evolution sent inline and
 * publishes what this returns.
 *
 * - One body may be several events: a new message is a `message` (unless the session sent it) and a `message.any`,
 *   in that order, sharing one media object. A kind Herald has no word for keeps Evolution's `event` as its kind.
 * - event_id: Evolution sends no id, retries a failed post with the same body, and reports some things twice, so
 *   the id is derived from the instance, the Herald kind and what identifies the event (evolution-events.ts): the
 *   message id, with the ack's value or the edit's time; for other kinds a digest of `event`, `data` and `date_time`.
 * - timestamp: a message's own time; other events get none here (the time Herald receives them), since `date_time`
 *   is Evolution's local time labelled UTC. It still orders one server's connection updates: `status_at`.
 * - `instance`, `destination`, `server_url`, `date_time`, `sender` and `apikey` (Evolution's own credential) are
 *   not delivered.
 */
import { createHash } from 'node:crypto';
import { derivedEventId } from './engine-event-id.ts';
import {
  type Mapped,
  readAck,
  readDelete,
  readGroup,
  readOther,
  readProtocol,
  readSession,
} from './evolution-events.ts';
import { type InlineFile, readKey, readMessage, readReaction } from './evolution-message.ts';
import { isObj, type Obj } from './payload-rules.ts';
import type { FieldError } from './types.ts';

export type { InlineFile } from './evolution-message.ts';

/** One event of a body, as publishEvents takes it. */
export interface EvolutionEvent {
  event: string;
  payload: Obj;
  event_id: string;
  /** ms; null: the time Herald receives it. */
  timestamp: number | null;
  /** What orders a session.status among the instance's (Evolution's date_time, in ms), or null. */
  status_at: number | null;
  /** The message's media is the file Evolution sent inline (the body's InlineFile), once Herald has stored it. */
  inline_media: boolean;
}

export interface EvolutionRead {
  events: EvolutionEvent[];
  /** `data.message.base64`, to be stored once for all the body's events that show it. */
  inline: InlineFile | null;
}

/** Evolution's events that are new messages: Baileys' own (messages.upsert) and those sent through its API. */
const MESSAGE_EVENTS = new Set(['messages.upsert', 'send.message']);

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

export function readEvolutionBody(
  instanceId: string,
  body: unknown,
): { read: EvolutionRead } | { errors: FieldError[] } {
  if (!isObj(body)) {
    return { errors: [{ field: 'body', message: "must be a JSON object (Evolution API's event body)" }] };
  }
  const errors: FieldError[] = [];
  const event = text(body.event);
  if (event === null) {
    errors.push({ field: 'event', message: 'is required: the event, such as messages.upsert' });
  }
  if (!('data' in body)) errors.push({ field: 'data', message: 'is required (null is allowed)' });
  if (errors.length) return { errors };
  const session = text(body.sender);
  const read = MESSAGE_EVENTS.has(event as string)
    ? readNewMessage(body.data, session, errors)
    : { mapped: [mapped(event as string, body.data, session, errors)], inline: null, seconds: null };
  if (errors.length) return { errors };
  const statusAt = typeof body.date_time === 'string' ? Date.parse(body.date_time) : Number.NaN;
  const digest = createHash('sha256')
    .update(JSON.stringify([event, body.data ?? null, body.date_time ?? null]))
    .digest('base64url');
  const events = read.mapped.map((m): EvolutionEvent => {
    const kind = m?.kind ?? (event as string);
    const name = m?.identity ?? `digest:${digest}`;
    const isMessage = kind === 'message' || kind === 'message.any' || kind === 'message.reaction';
    return {
      event: kind,
      payload: m?.payload ?? { _evolution: body.data },
      event_id: derivedEventId(instanceId, `evolution:${kind}:${name}`),
      timestamp: isMessage && read.seconds !== null ? read.seconds * 1000 : null,
      status_at: kind === 'session.status' && Number.isFinite(statusAt) ? statusAt : null,
      inline_media: read.inline !== null && (kind === 'message' || kind === 'message.any'),
    };
  });
  return { read: { events, inline: read.inline } };
}

/** The Herald event of a body that is no new message, or null when Herald keeps Evolution's kind. */
function mapped(event: string, data: unknown, session: string | null, errors: FieldError[]): Mapped | null {
  switch (event) {
    case 'messages.update':
      return readAck(data, errors);
    case 'messages.edited':
    case 'send.message.update':
      return readProtocol(data, session, errors);
    case 'messages.delete':
      return readDelete(data, session, errors);
    case 'connection.update':
    case 'qrcode.updated':
      return readSession(event, data, session);
    default:
      return readGroup(event, data) ?? readOther(event, data);
  }
}

/** A new message: a reaction, or a `message` (not the session's own) and a `message.any`. */
function readNewMessage(data: unknown, session: string | null, errors: FieldError[]) {
  const none = { mapped: [], inline: null, seconds: null };
  if (!isObj(data)) {
    errors.push({ field: 'data', message: "must be an object: Evolution's message { key, message, … }" });
    return none;
  }
  const key = readKey(data.key, 'data.key', errors);
  if (key === null) return none;
  const { payload, inline, seconds } = readMessage(data, key, session);
  const content = isObj(data.message) ? data.message : {};
  if (isObj(content.reactionMessage)) {
    const reaction = readReaction(content.reactionMessage, 'data.message.reactionMessage', errors);
    if (reaction === null) return none;
    const { body: _body, hasMedia: _has, media: _media, ...rest } = payload;
    const mapped: Mapped = {
      kind: 'message.reaction',
      payload: { ...rest, reaction },
      identity: `${key.id}`,
    };
    return { mapped: [mapped], inline: null, seconds };
  }
  const kinds = key.fromMe === true ? ['message.any'] : ['message', 'message.any'];
  return {
    mapped: kinds.map((kind): Mapped => ({ kind, payload, identity: `${key.id}` })),
    inline,
    seconds,
  };
}
