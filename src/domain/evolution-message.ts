/**
 * An Evolution API message (`data` of `messages.upsert` and `send.message`: Baileys' message key and content as
 * Evolution's prepareMessage leaves them, or the Cloud API's in the same shape) read as Herald's message payload.
 * Pure. Evolution names the chat in `key.remoteJid` and the session in the body's `sender`; Herald's `from` is who
 * sent the message and `to` who got it, so the two swap for the session's own messages.
 *
 *   id, fromMe, participant   key.id, key.fromMe, key.participant
 *   timestamp                 messageTimestamp (seconds)
 *   body                      conversation, extendedTextMessage.text, or the media's caption; else null
 *   hasMedia, media           an image, video, audio, document, sticker or ptv message; its media as media(…) says
 *   from_phone                the session's phone for its own messages; else the first phone id of the sender's
 *                             ids (a hidden id's phone the instance learned is normalise's, later)
 *   _evolution                `data` as Evolution sent it, but for message.base64 (the file, stored by Herald)
 */
import { isGroup, phoneOf } from './jid.ts';
import { isObj, type Obj } from './payload-rules.ts';
import type { FieldError } from './types.ts';

/** The content types that carry a file, as Baileys names them. */
const MEDIA_MESSAGES = [
  'imageMessage',
  'videoMessage',
  'audioMessage',
  'documentMessage',
  'stickerMessage',
  'ptvMessage',
];

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** Evolution's S3 link: only an absolute http(s) URL names a file Herald can fetch. */
const isHttpUrl = (v: unknown): v is string =>
  typeof v === 'string' && /^https?:\/\//i.test(v) && URL.canParse(v);

/** The media part of a message's content, or null; a document with a caption is Baileys' wrapped document. */
export function mediaPart(message: Obj): Obj | null {
  for (const type of MEDIA_MESSAGES) if (isObj(message[type])) return message[type] as Obj;
  const wrapped = message.documentWithCaptionMessage;
  if (isObj(wrapped) && isObj(wrapped.message) && isObj(wrapped.message.documentMessage)) {
    return wrapped.message.documentMessage;
  }
  return null;
}

/** The text of a message's content: its text, or its media's caption; null when it has none. */
export function messageText(message: Obj): string | null {
  const extended = isObj(message.extendedTextMessage) ? message.extendedTextMessage.text : null;
  const media = mediaPart(message);
  return text(message.conversation) ?? text(extended) ?? text(media?.caption) ?? null;
}

/** A number of seconds as Evolution writes one: a number, digits (the Cloud API's), or a protobuf Long. */
export function seconds(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.floor(v);
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return Number(v);
  if (isObj(v) && typeof v.low === 'number' && typeof v.high === 'number') {
    return (v.high >>> 0) * 2 ** 32 + (v.low >>> 0);
  }
  return null;
}

/** The file Evolution sent inline (`message.base64`, its `webhook.base64` setting), to be stored by Herald. */
export interface InlineFile {
  base64: string;
  mimetype: string | null;
  filename: string | null;
}

/** A message read: its payload (media still to settle when the file came inline) and that file. */
export interface ReadMessage {
  payload: Obj;
  inline: InlineFile | null;
  /** messageTimestamp in seconds, or null when Evolution sent none that reads as one. */
  seconds: number | null;
}

/** Evolution's key of a message (`data.key`, or `data` itself for a bare key), or the errors naming its fields. */
export function readKey(key: unknown, path: string, errors: FieldError[]): Obj | null {
  if (!isObj(key)) {
    errors.push({ field: path, message: "must be an object: the message's key { remoteJid, fromMe, id }" });
    return null;
  }
  const before = errors.length;
  if (text(key.id) === null) errors.push({ field: `${path}.id`, message: "is required: the message's id" });
  if (typeof key.fromMe !== 'boolean') {
    errors.push({ field: `${path}.fromMe`, message: 'is required: true or false (a JSON boolean)' });
  }
  return errors.length > before ? null : key;
}

/** `from` and `to` of a message in chat `chat`: the chat sent it, unless the session did. */
export function sides(fromMe: boolean, chat: unknown, session: string | null): Obj {
  const [from, to] = fromMe ? [session, text(chat)] : [text(chat), session];
  return { ...(from === null ? {} : { from }), ...(to === null ? {} : { to }) };
}

/**
 * The sender's phone: the session's for its own message; else the first phone id among the sender's ids (in a
 * group the participant's, else the chat's), the alternative ids Baileys sends beside a hidden one included.
 */
function senderPhone(key: Obj, session: string | null): string | null {
  if (key.fromMe === true) return phoneOf(session);
  const ids = isGroup(key.remoteJid)
    ? [key.participant, key.participantAlt, key.participantPn]
    : [key.remoteJid, key.remoteJidAlt, key.senderPn];
  for (const id of ids) {
    const phone = phoneOf(id);
    if (phone !== null) return phone;
  }
  return null;
}

/** `data` without `message.base64`: the file is Herald's to store, and `media` says where it went. */
export function withoutFile(data: Obj): Obj {
  if (!isObj(data.message) || !('base64' in data.message)) return data;
  const { base64: _file, ...message } = data.message;
  return { ...data, message };
}

/**
 * The media of a message (Cloud API: `mime_type`): the session's own is outgoing; a file sent inline is Herald's to
 * store (null here: filled once stored); Evolution's S3 copy (`mediaUrl`) is the engine's file to download; else
 * unavailable, since the url inside `imageMessage` and the like is WhatsApp's encrypted file.
 */
function media(message: Obj, part: Obj, fromMe: boolean): { media: Obj | null; inline: InlineFile | null } {
  const mimetype = text(part.mimetype) ?? text(part.mime_type);
  const withType = mimetype === null ? {} : { mimetype };
  if (fromMe) return { media: { status: 'outgoing', ...withType }, inline: null };
  const filename = text(part.fileName) ?? text(part.filename);
  if (text(message.base64) !== null) {
    return { media: null, inline: { base64: message.base64 as string, mimetype, filename } };
  }
  if (isHttpUrl(message.mediaUrl)) {
    const file = { url: message.mediaUrl, ...withType, ...(filename === null ? {} : { filename }) };
    return { media: file, inline: null };
  }
  return { media: { status: 'unavailable', ...withType }, inline: null };
}

/**
 * A message's payload, its key already read (readKey). `session` is the body's `sender`, the session's own id.
 * The message kinds of one body are made from this one read, so they share one media object.
 */
export function readMessage(data: Obj, key: Obj, session: string | null): ReadMessage {
  const fromMe = key.fromMe as boolean;
  const message = isObj(data.message) ? data.message : {};
  const part = mediaPart(message);
  const settled = part ? media(message, part, fromMe) : { media: null, inline: null };
  const at = seconds(data.messageTimestamp);
  const phone = senderPhone(key, session);
  const payload: Obj = {
    id: key.id,
    fromMe,
    ...sides(fromMe, key.remoteJid, session),
    ...(text(key.participant) === null ? {} : { participant: key.participant }),
    ...(at === null ? {} : { timestamp: at }),
    body: messageText(message),
    hasMedia: part !== null,
    media: settled.media,
    ...(phone === null ? {} : { from_phone: phone }),
    _evolution: withoutFile(data),
  };
  return { payload, inline: settled.inline, seconds: at };
}

/** A reaction's `{ text, messageId }`: an empty text removes one; the reacted message's id is required. */
export function readReaction(reaction: Obj, path: string, errors: FieldError[]): Obj | null {
  const target = isObj(reaction.key) ? text(reaction.key.id) : null;
  if (target === null) {
    errors.push({ field: `${path}.key.id`, message: 'is required: the id of the message reacted to' });
    return null;
  }
  return { text: typeof reaction.text === 'string' ? reaction.text : '', messageId: target };
}
