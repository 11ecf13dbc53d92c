/**
 * The event catalog and the payload rules per kind (seed 2.3–2.5 and 6, SPEC §7). Pure: no I/O.
 * Only the fields the seed and the SPEC name are checked; every other field passes through unchanged.
 */

import { EVENT_KINDS } from './event-kinds.ts';
import { isReference } from './media-object.ts';
import { quote } from './quote.ts';
import type { FieldError } from './types.ts';

export { EVENT_KINDS };

/** A frozen list, so no importer can change a catalog at run time. */
const list = (...items: string[]): readonly string[] => Object.freeze(items);

export const SESSION_STATUSES = list('STOPPED', 'STARTING', 'SCAN_QR_CODE', 'WORKING', 'FAILED');

export const ACK_NAMES: Record<number, string> = Object.freeze({
  [-1]: 'ERROR',
  0: 'PENDING',
  1: 'SERVER',
  2: 'DEVICE',
  3: 'READ',
  4: 'PLAYED',
});

export const MEDIA_STATUSES = list('ready', 'too_large', 'failed', 'outgoing', 'unavailable');

/** The chat identifier of status/story messages (seed 2.1, ignore_status). */
const STATUS_CHAT = 'status@broadcast';
const ACK_VALUES = [-1, 0, 1, 2, 3, 4];
const UNKNOWN_ERROR_CODES = ['TIMEOUT', 'WORKER_DIED'];
const KIND_SET = new Set(EVENT_KINDS);

export function isEventKind(k: string): boolean {
  return KIND_SET.has(k);
}

type Obj = Record<string, unknown>;
/** Returns the rule a value breaks, or null when it is fine. */
type Check = (v: unknown) => string | null;
/** A named field: its check, or a nested shape; optional fields may be absent or null. */
interface Field {
  check?: Check;
  shape?: Shape;
  optional?: boolean;
}
type Shape = Record<string, Field>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown): boolean => v !== undefined && v !== null;

const str: Check = (v) => (typeof v === 'string' ? null : 'must be a string');
const nonEmpty: Check = (v) => (typeof v === 'string' && v !== '' ? null : 'must be a non-empty string');
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'must be a boolean');
const digits: Check = (v) => str(v) ?? (/^\d+$/.test(v as string) ? null : 'must contain digits only');
const prefixed =
  (p: string): Check =>
  (v) =>
    typeof v === 'string' && v.startsWith(p) && v.length > p.length
      ? null
      : `must be a string starting with "${p}"`;
const oneOf =
  (values: readonly unknown[]): Check =>
  (v) =>
    values.includes(v) ? null : `must be one of ${values.join(', ')}`;
const httpUrl: Check = (v) =>
  typeof v === 'string' && /^https?:\/\//i.test(v) && URL.canParse(v)
    ? null
    : 'must be an absolute http(s) URL';

const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;
/** ISO 8601 in UTC ("Z"), with a real calendar date: a regex alone would pass 2026-02-30. */
const isoUtc: Check = (v) => {
  const rule = 'must be an ISO 8601 UTC time such as 2026-11-21T10:00:00Z';
  const m = typeof v === 'string' ? ISO_UTC.exec(v) : null;
  if (!m) return rule;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const real = t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
  return real && h < 24 && mi < 60 && s < 60 ? null : rule;
};

function checkShape(obj: Obj, shape: Shape, path: string, errors: FieldError[]): void {
  for (const [name, field] of Object.entries(shape)) {
    const v = obj[name];
    const at = path + name;
    if (!present(v)) {
      if (!field.optional) errors.push({ field: at, message: 'is required' });
      continue;
    }
    if (field.shape) {
      if (isObj(v)) checkShape(v, field.shape, `${at}.`, errors);
      else errors.push({ field: at, message: 'must be an object' });
      continue;
    }
    const rule = field.check?.(v);
    if (rule) errors.push({ field: at, message: rule });
  }
}

const id: Field = { check: nonEmpty };
const chat: Field = { check: nonEmpty };

const MESSAGE: Shape = {
  id,
  from: chat,
  from_phone: { check: digits },
  fromMe: { check: bool },
  body: { check: str },
  hasMedia: { check: bool },
};

const MEDIA: Shape = {
  status: { check: oneOf(MEDIA_STATUSES), optional: true },
  mimetype: { check: nonEmpty, optional: true },
  media_id: { check: prefixed('med_'), optional: true },
  url: { check: httpUrl, optional: true },
  expires_at: { check: isoUtc, optional: true },
};

const SHAPES: Record<string, Shape> = {
  'session.status': { status: { check: oneOf(SESSION_STATUSES) }, phone: { check: digits, optional: true } },
  message: MESSAGE,
  'message.any': MESSAGE,
  'message.ack': {
    id,
    from: chat,
    to: chat,
    ack: { check: oneOf(ACK_VALUES) },
    ackName: { check: oneOf(ACK_VALUES.map((a) => ACK_NAMES[a])) },
  },
  'message.reaction': {
    id,
    from: chat,
    to: chat,
    // Empty text is how a reaction is removed, so only its type is checked.
    reaction: { shape: { text: { check: str }, messageId: id } },
  },
  'message.edited': { id, from: chat, to: chat, body: { check: str }, editedMessageId: id },
  'message.revoked': { id: { check: nonEmpty, optional: true }, from: chat, to: chat, revokedMessageId: id },
  'message.unknown': {
    message_id: { check: prefixed('msg_') },
    client_reference: { check: str },
    to: { check: digits },
    type: { check: nonEmpty },
    error_code: { check: oneOf(UNKNOWN_ERROR_CODES) },
  },
};

/**
 * Seed 2.5 + SPEC §7: engine-stored media (with url), an uploaded-file reference (only media_id), or no file.
 * On a message the session sent (fromMe true) the status may be left out: it is `outgoing` (media-object.ts).
 */
function checkMedia(media: unknown, fromMe: unknown, path: string, errors: FieldError[]): void {
  if (!isObj(media)) {
    errors.push({ field: path, message: 'must be an object' });
    return;
  }
  const before = errors.length;
  checkShape(media, MEDIA, `${path}.`, errors);
  const { url } = media;
  const reference = isReference(media);
  const status = media.status ?? (fromMe === true ? 'outgoing' : undefined);
  if (!present(status) && !reference) {
    errors.push({
      field: `${path}.status`,
      message: 'is required unless the media is only a media_id reference',
    });
  }
  if (errors.length > before) return; // the cross-field rules below assume well-typed fields
  if (reference && fromMe === true) {
    errors.push({
      field: `${path}.media_id`,
      message:
        'must be absent when fromMe is true: no copy of media the session sent is kept (status outgoing)',
    });
  } else if (present(url)) {
    if (present(status) && status !== 'ready') {
      errors.push({ field: `${path}.url`, message: `must be absent when status is ${status}` });
    }
    for (const name of ['mimetype', 'media_id', 'expires_at']) {
      if (!present(media[name])) {
        errors.push({ field: `${path}.${name}`, message: 'is required when url is given' });
      }
    }
  } else if (status === 'ready' && !reference) {
    // "ready" means the receiver downloads it from url (seed 2.5); without one it cannot.
    errors.push({
      field: `${path}.url`,
      message: 'is required when status is ready, unless the media is only a media_id reference to an upload',
    });
  }
  if (status === 'outgoing' && fromMe === false) {
    errors.push({
      field: `${path}.status`,
      message: 'outgoing is only for messages the session sent (fromMe true)',
    });
  }
}

function checkMessage(kind: string, p: Obj, path: string, errors: FieldError[]): void {
  if (kind === 'message' && p.fromMe === true) {
    errors.push({
      field: `${path}fromMe`,
      message: 'message is an incoming message from others; publish an outgoing one as message.any only',
    });
  }
  const hasMedia = present(p.media);
  if (p.hasMedia === true && !hasMedia) {
    errors.push({ field: `${path}media`, message: 'must be present when hasMedia is true' });
  } else if (p.hasMedia === false && hasMedia) {
    errors.push({ field: `${path}media`, message: 'must be absent when hasMedia is false' });
  } else if (hasMedia) {
    checkMedia(p.media, p.fromMe, `${path}media`, errors);
  }
}

/**
 * Validates one published event's payload for its kind. `prefix` is prepended to field names, e.g.
 * 'events[3].' in a batch, so fields read 'events[3].payload.from'. Returns [] when valid.
 */
export function validatePayload(kind: string, payload: unknown, prefix = ''): FieldError[] {
  if (!isEventKind(kind)) return [{ field: `${prefix}event`, message: `unknown event kind ${quote(kind)}` }];
  if (!isObj(payload)) return [{ field: `${prefix}payload`, message: 'must be a JSON object' }];
  const errors: FieldError[] = [];
  const path = `${prefix}payload.`;
  const shape = SHAPES[kind];
  if (shape) checkShape(payload, shape, path, errors);
  if (kind === 'message' || kind === 'message.any') checkMessage(kind, payload, path, errors);
  if (kind === 'message.ack' && ACK_VALUES.includes(payload.ack as number)) {
    const name = ACK_NAMES[payload.ack as number];
    // Only a known name can disagree with ack; an unknown one is already reported above.
    if (Object.values(ACK_NAMES).includes(payload.ackName as string) && payload.ackName !== name) {
      errors.push({ field: `${path}ackName`, message: `must be "${name}" for ack ${payload.ack}` });
    }
  }
  return errors;
}

/** True when the event concerns a status/story: payload from, to or chat_id equals 'status@broadcast'. */
export function concernsStatus(payload: Record<string, unknown>): boolean {
  return payload.from === STATUS_CHAT || payload.to === STATUS_CHAT || payload.chat_id === STATUS_CHAT;
}
