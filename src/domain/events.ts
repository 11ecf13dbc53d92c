/**
 * The event catalog and the payload rules per kind. Pure: no I/O.
 * The measure is what real engines (WAHA: WEBJS, NOWEB, GOWS) send: a named field's type is checked when it is
 * present, and only what routing and the delivery format need is required. Every other field passes unchanged.
 */

import { EVENT_KINDS, OPERATIONAL_KINDS } from './event-kinds.ts';
import { STATUS_CHAT } from './jid.ts';
import { isReference } from './media-object.ts';
import { OPERATIONAL_SCHEMAS } from './operational-schemas.ts';
import {
  ack,
  bool,
  checkShape,
  digits,
  httpUrl,
  isObj,
  isoTime,
  type JsonSchema,
  nonEmpty,
  type Obj,
  oneOf,
  orNull,
  prefixed,
  present,
  required,
  type Shape,
  shapeSchema,
  str,
  upperWord,
} from './payload-rules.ts';
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

/** The kinds whose payload is a message that may carry media. */
export const MESSAGE_KINDS = list('message', 'message.any');

const UNKNOWN_ERROR_CODES = ['TIMEOUT', 'WORKER_DIED'];
const KIND_SET = new Set(EVENT_KINDS);

export function isEventKind(k: string): boolean {
  return KIND_SET.has(k);
}

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

/** A media object in Herald's own terms: it says its status. */
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

/** A media object: a status, or a reference to an upload; a stored file (url) comes with all that describes it. */
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
    // "ready" means the receiver downloads it from url; without one it cannot.
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
  if (OPERATIONAL_KINDS.includes(kind)) {
    return [
      {
        field: `${prefix}event`,
        message: `${quote(kind)} is sent by Herald itself, about its own deliveries, and cannot be published`,
      },
    ];
  }
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

const SEED_MEDIA_NOTE =
  'Herald’s media object: `status` says whether the file can be downloaded (ready, with `url` until `expires_at`) ' +
  'or why not (too_large, failed, unavailable; outgoing for what the session sent)';
const ENGINE_MEDIA_NOTE = 'the engine’s media object, before Herald stores the file';
const REVOKED_NOTE =
  'the message as it was (`before`) and its tombstone (`after`); either may be null, as engines differ';

/**
 * The JSON Schema of a kind's payload, made from the same shapes that validate it, so the reference cannot drift
 * from the rules. The rules between fields (a media url only when ready…) are said in the descriptions.
 */
export function payloadSchema(kind: string): JsonSchema {
  if (OPERATIONAL_KINDS.includes(kind)) return OPERATIONAL_SCHEMAS[kind];
  if (kind === 'message.revoked') {
    return {
      anyOf: [
        {
          ...shapeSchema(
            { revokedMessageId: { check: str } },
            { after: orNull({ type: 'object' }), before: orNull({ type: 'object' }) },
          ),
          anyOf: [{ required: ['after'] }, { required: ['before'] }],
          description: REVOKED_NOTE,
        },
        shapeSchema({ id: { check: str }, ...CHATS, revokedMessageId: required(nonEmpty) }),
      ],
    };
  }
  const shape = SHAPES[kind];
  if (!shape) {
    return { type: 'object', additionalProperties: true, description: 'as the engine sends it' };
  }
  if (!MESSAGE_KINDS.includes(kind)) return shapeSchema(shape);
  const media = orNull({
    anyOf: [
      { ...shapeSchema(SEED_MEDIA), description: SEED_MEDIA_NOTE },
      {
        ...shapeSchema(ENGINE_MEDIA),
        // A status makes it Herald's object, judged by the branch above.
        not: { required: ['status'], properties: { status: { not: { type: 'null' } } } },
        description: ENGINE_MEDIA_NOTE,
      },
    ],
  });
  return shapeSchema(shape, { media: { ...media, description: 'only when hasMedia is true' } });
}
