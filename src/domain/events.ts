/**
 * The event catalog and the payload rules per kind. Pure: no I/O.
 * The measure is what real engines (WAHA: WEBJS, NOWEB, GOWS) send: a named field's type is checked when it is
 * present, and only what routing and the delivery format need is required. Every other field passes unchanged.
 */

import { EVENT_KINDS } from './event-kinds.ts';
import { toUtc } from './iso-time.ts';
import { STATUS_CHAT } from './jid.ts';
import { isReference } from './media-object.ts';
import { quote } from './quote.ts';
import type { FieldError } from './types.ts';

export { EVENT_KINDS };

/** A frozen list, so no importer can change a catalog at run time. */
const list = (...items: string[]): readonly string[] => Object.freeze(items);

/** The statuses a session is known to go through; engines send others too (PASSKEY_REQUIRED), kept as they are. */
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

/** The kinds whose payload is a message that may carry media (seed 2.3). */
export const MESSAGE_KINDS = list('message', 'message.any');

const UNKNOWN_ERROR_CODES = ['TIMEOUT', 'WORKER_DIED'];
const KIND_SET = new Set(EVENT_KINDS);

export function isEventKind(k: string): boolean {
  return KIND_SET.has(k);
}

type Obj = Record<string, unknown>;
/** Returns the rule a value breaks, or null when it is fine. */
type Check = (v: unknown) => string | null;
/** A named field: its check, or a nested shape. Absent and null are the same, and fine unless required. */
interface Field {
  check?: Check;
  shape?: Shape;
  required?: boolean;
}
type Shape = Record<string, Field>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown): boolean => v !== undefined && v !== null;

const str: Check = (v) => (typeof v === 'string' ? null : 'must be a string');
const nonEmpty: Check = (v) => (typeof v === 'string' && v !== '' ? null : 'must be a non-empty string');
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'must be true or false (a JSON boolean)');
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
const upperWord: Check = (v) =>
  typeof v === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(v)
    ? null
    : 'must be a session status in upper case, such as WORKING or SCAN_QR_CODE';
const ack: Check = (v) =>
  Number.isInteger(v) && (v as number) >= -1 && (v as number) <= 4
    ? null
    : 'must be an integer from -1 (ERROR) to 4 (PLAYED)';
const isoTime: Check = (v) =>
  typeof v === 'string' && toUtc(v) !== null
    ? null
    : 'must be an ISO 8601 time with an offset, such as 2026-11-21T10:00:00Z';

function checkShape(obj: Obj, shape: Shape, path: string, errors: FieldError[]): void {
  for (const [name, field] of Object.entries(shape)) {
    const v = obj[name];
    const at = path + name;
    if (!present(v)) {
      if (field.required) errors.push({ field: at, message: 'is required' });
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

const required = (check: Check): Field => ({ check, required: true });
/** Chat ids: engines write `…@c.us`, `…@s.whatsapp.net`, `…@g.us`, `…@lid`; only the type is checked. */
const CHATS: Shape = { from: { check: str }, to: { check: str }, participant: { check: str } };

const MESSAGE: Shape = {
  id: required(nonEmpty),
  fromMe: required(bool),
  ...CHATS,
  from_phone: { check: digits },
  body: { check: str },
  hasMedia: { check: bool },
};

/** A media object in Herald's own terms (seed 2.5): it says its status. */
const SEED_MEDIA: Shape = {
  status: { check: oneOf(MEDIA_STATUSES) },
  mimetype: { check: nonEmpty },
  media_id: { check: prefixed('med_') },
  url: { check: httpUrl },
  expires_at: { check: isoTime },
};

/** A media object as the engine sends it: where its file server has the file, or why it has none. */
const ENGINE_MEDIA: Shape = { url: { check: httpUrl }, mimetype: { check: str }, filename: { check: str } };

const SHAPES: Record<string, Shape> = {
  'session.status': { status: required(upperWord), phone: { check: digits } },
  message: MESSAGE,
  'message.any': MESSAGE,
  'message.ack': { id: required(nonEmpty), ...CHATS, ack: { check: ack }, ackName: { check: str } },
  'message.reaction': {
    id: { check: str },
    ...CHATS,
    // Empty text is how a reaction is removed, so only its type is checked.
    reaction: { shape: { text: required(str), messageId: required(nonEmpty) }, required: true },
  },
  'message.edited': {
    id: required(nonEmpty),
    ...CHATS,
    body: { check: str },
    editedMessageId: { check: str },
  },
  'message.unknown': {
    message_id: required(prefixed('msg_')),
    client_reference: required(str),
    to: required(digits),
    type: required(nonEmpty),
    error_code: required(oneOf(UNKNOWN_ERROR_CODES)),
  },
};

/**
 * WAHA's revoke is `{ after, before, revokedMessageId? }` (either message may be null, and engines differ in what
 * they carry); the flat `{ id?, from, to, revokedMessageId }` is accepted too.
 */
function checkRevoked(p: Obj, path: string, errors: FieldError[]): void {
  if ('after' in p || 'before' in p) {
    for (const side of ['after', 'before']) {
      if (present(p[side]) && !isObj(p[side])) {
        errors.push({ field: `${path}${side}`, message: 'must be a message object or null' });
      }
    }
    checkShape(p, { revokedMessageId: { check: str } }, path, errors);
    return;
  }
  checkShape(p, { id: { check: str }, ...CHATS, revokedMessageId: required(nonEmpty) }, path, errors);
}

/** Seed 2.5: a status, or a reference to an upload; a stored file (url) comes with all that describes it. */
function checkSeedMedia(media: Obj, fromMe: unknown, path: string, errors: FieldError[]): void {
  const before = errors.length;
  checkShape(media, SEED_MEDIA, `${path}.`, errors);
  if (errors.length > before) return; // the cross-field rules below assume well-typed fields
  const { status } = media;
  if (present(media.url)) {
    if (status !== 'ready')
      errors.push({ field: `${path}.url`, message: `must be absent when status is ${status}` });
    for (const name of ['mimetype', 'media_id', 'expires_at']) {
      if (!present(media[name]))
        errors.push({ field: `${path}.${name}`, message: 'is required when url is given' });
    }
  } else if (status === 'ready' && !isReference(media)) {
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

/** The media of a message: Herald's own object, a reference to an upload, or the engine's `{ url, mimetype, … }`. */
function checkMedia(p: Obj, path: string, errors: FieldError[]): void {
  const { media } = p;
  if (!present(media)) return; // hasMedia true without media: the engine did not fetch it (unavailable)
  if (p.hasMedia === false) {
    errors.push({ field: `${path}media`, message: 'must be absent or null when hasMedia is false' });
  } else if (!isObj(media)) {
    errors.push({ field: `${path}media`, message: 'must be an object or null' });
  } else if (present(media.status) || isReference(media)) {
    checkSeedMedia(media, p.fromMe, `${path}media`, errors);
  } else {
    checkShape(media, ENGINE_MEDIA, `${path}media.`, errors);
  }
}

/**
 * Validates one published event's payload for its kind. `prefix` is prepended to field names, e.g.
 * 'events[3].' in a batch, so fields read 'events[3].payload.from'. Returns [] when valid.
 */
export function validatePayload(kind: string, payload: unknown, prefix = ''): FieldError[] {
  if (!isEventKind(kind)) return [{ field: `${prefix}event`, message: `unknown event kind ${quote(kind)}` }];
  return validateKnownPayload(kind, payload, prefix);
}

/** The same rules for a kind that may lie outside the catalog (the engine's webhook): an unknown kind has none. */
export function validateKnownPayload(kind: string, payload: unknown, prefix = ''): FieldError[] {
  if (!isObj(payload)) return [{ field: `${prefix}payload`, message: 'must be a JSON object' }];
  const errors: FieldError[] = [];
  const path = `${prefix}payload.`;
  const shape = SHAPES[kind];
  if (shape) checkShape(payload, shape, path, errors);
  if (MESSAGE_KINDS.includes(kind)) checkMedia(payload, path, errors);
  if (kind === 'message.revoked') checkRevoked(payload, path, errors);
  return errors;
}

/** The ids that tell whether an event concerns a status/story: the chat, its sender, a revoked message's chat. */
function chatsOf(payload: Obj): unknown[] {
  const sides = [payload.after, payload.before].filter(isObj).map((m) => m.from);
  return [payload.from, payload.to, payload.chat_id, payload.chatId, payload.participant, ...sides];
}

/**
 * True when the event concerns a status/story (`status@broadcast`), which only ignore_status: false receives.
 * A payload that is no object (an engine kind outside the catalog may send one) concerns none.
 */
export function concernsStatus(payload: unknown): boolean {
  return isObj(payload) && chatsOf(payload).includes(STATUS_CHAT);
}
