/**
 * Evolution API's events other than new messages, read as Herald's kinds. Pure. Each reader returns the Herald
 * event, or null when the body is one Herald keeps as Evolution's own kind (a status it has no word for, a protocol
 * message that is neither an edit nor a revoke…). What identifies the event (its event_id's name) is said here too:
 * Evolution sends no event id and reports some things twice.
 *
 *   messages.update                         message.ack, by Evolution's status (ERROR -1 … PLAYED 4)
 *   messages.edited, send.message.update    message.edited (editedMessage) or message.revoked (type REVOKE or 0)
 *   messages.delete                         message.revoked: the one of the REVOKE edit above, if both come
 *   connection.update, qrcode.updated       session.status
 *   groups.*, group-participants.update     group.join, group.update, group.participants
 *   call, labels.*, presence.update         call.*, label.*, presence.update
 */

import { messageText, readKey, sides } from './evolution-message.ts';
import { phoneOf } from './jid.ts';
import { isObj, type Obj } from './payload-rules.ts';
import type { FieldError } from './types.ts';

export interface Mapped {
  kind: string;
  payload: Obj;
  /** What names the event at its instance (with its kind); null: a digest of the whole body does. */
  identity: string | null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A table's entry for a key Evolution sent; null for a key it lacks (never an inherited name such as `toString`). */
const entry = <T>(table: Record<string, T>, key: unknown): T | null =>
  typeof key === 'string' && Object.hasOwn(table, key) ? table[key] : null;

/** Baileys' statuses as Evolution names them (the Cloud API's in upper case), and Herald's ack for each. */
const ACKS: Record<string, number> = {
  ERROR: -1,
  FAILED: -1,
  PENDING: 0,
  SERVER_ACK: 1,
  SENT: 1,
  DELIVERY_ACK: 2,
  DELIVERED: 2,
  READ: 3,
  PLAYED: 4,
};

/** messages.update: an ack, when its status is one; DELETED, or none, is what Evolution sends for an edit. */
export function readAck(data: unknown, errors: FieldError[]): Mapped | null {
  const ack = isObj(data) ? entry(ACKS, data.status) : null;
  if (!isObj(data) || ack === null) return null;
  const before = errors.length;
  if (text(data.keyId) === null)
    errors.push({ field: 'data.keyId', message: "is required: the message's id" });
  if (typeof data.fromMe !== 'boolean') {
    errors.push({ field: 'data.fromMe', message: 'is required: true or false (a JSON boolean)' });
  }
  if (errors.length > before) return null;
  return {
    kind: 'message.ack',
    payload: {
      id: data.keyId,
      fromMe: data.fromMe,
      ...sides(data.fromMe as boolean, data.remoteJid, null),
      ...(text(data.participant) === null ? {} : { participant: data.participant }),
      ack,
      ackName: data.status,
      _evolution: data,
    },
    identity: `${data.keyId}|${ack}`,
  };
}

/**
 * A protocol message (messages.edited, send.message.update): an edit carries the new content, a revoke has type
 * REVOKE (0 in protobuf's numbers). Evolution omits the edit's own id: the edited message's names it, with the time
 * of the edit (else its text), so each edit of one message is an event of its own.
 */
export function readProtocol(data: unknown, session: string | null, errors: FieldError[]): Mapped | null {
  if (!isObj(data)) return null;
  const edit = isObj(data.editedMessage);
  if (!edit && data.type !== 'REVOKE' && data.type !== 0) return null;
  const key = readKey(data.key, 'data.key', errors);
  if (key === null) return null;
  const chat = sides(key.fromMe as boolean, key.remoteJid, session);
  if (!edit) return revoked(key, chat, data);
  const body = messageText(data.editedMessage as Obj);
  const when = data.timestampMs ?? body;
  return {
    kind: 'message.edited',
    payload: { id: key.id, editedMessageId: key.id, fromMe: key.fromMe, ...chat, body, _evolution: data },
    identity: `${key.id}|${JSON.stringify(when ?? null)}`,
  };
}

/** messages.delete: `data` is the deleted message's key, or Evolution's stored message with its `key`. */
export function readDelete(data: unknown, session: string | null, errors: FieldError[]): Mapped | null {
  const stored = isObj(data) && isObj(data.key);
  const key = readKey(stored ? (data as Obj).key : data, stored ? 'data.key' : 'data', errors);
  if (key === null) return null;
  return revoked(key, sides(key.fromMe as boolean, key.remoteJid, session), data as Obj);
}

/** One revoke, whichever report of it: named by the revoked message, so Evolution's two reports are one event. */
function revoked(key: Obj, chat: Obj, data: Obj): Mapped {
  return {
    kind: 'message.revoked',
    payload: { revokedMessageId: key.id, fromMe: key.fromMe, ...chat, _evolution: data },
    identity: `${key.id}`,
  };
}

const STATES: Record<string, string> = {
  open: 'WORKING',
  connecting: 'STARTING',
  close: 'STOPPED',
  refused: 'FAILED',
};

/**
 * connection.update (`state`) and qrcode.updated (a QR code to scan; its other body says the QR limit was reached,
 * and the connection.update `refused` beside it says the rest). The linked phone: `wuid`, else the body's `sender`.
 */
export function readSession(event: string, data: unknown, session: string | null): Mapped | null {
  if (!isObj(data)) return null;
  const qrcode = event === 'qrcode.updated';
  const status = qrcode ? (isObj(data.qrcode) ? 'SCAN_QR_CODE' : null) : entry(STATES, data.state);
  if (status === null) return null;
  const phone = phoneOf(data.wuid) ?? phoneOf(session);
  return {
    kind: 'session.status',
    payload: { status, ...(phone === null ? {} : { phone }), _evolution: data },
    identity: null,
  };
}

const GROUP_KINDS: Record<string, string> = {
  'groups.upsert': 'group.join',
  'groups.update': 'group.update',
  'group-participants.update': 'group.participants',
};

/** A group event: Baileys sends a list of groups (upsert, update) or one update; `chatId` is the (first) group. */
export function readGroup(event: string, data: unknown): Mapped | null {
  const kind = GROUP_KINDS[event];
  if (kind === undefined) return null;
  const group = Array.isArray(data) ? data[0] : data;
  const chatId = isObj(group) ? text(group.id) : null;
  return { kind, payload: { ...(chatId === null ? {} : { chatId }), _evolution: data }, identity: null };
}

const CALLS: Record<string, string> = {
  offer: 'call.received',
  accept: 'call.accepted',
  reject: 'call.rejected',
};

const LABEL_CHAT: Record<string, string> = { add: 'label.chat.added', remove: 'label.chat.deleted' };

/** The kind of a call, labels.edit, labels.association or presence.update, or null when Herald has no word for it. */
function otherKind(event: string, o: Obj): string | null {
  switch (event) {
    case 'call':
      return entry(CALLS, o.status);
    case 'labels.edit':
      return o.deleted === true ? 'label.deleted' : 'label.upsert';
    case 'labels.association':
      return entry(LABEL_CHAT, o.type);
    case 'presence.update':
      return 'presence.update';
    default:
      return null;
  }
}

/** call, labels.*, presence.update: the kind only; the payload is Evolution's data. */
export function readOther(event: string, data: unknown): Mapped | null {
  const kind = otherKind(event, isObj(data) ? data : {});
  return kind === null ? null : { kind, payload: { _evolution: data }, identity: null };
}
