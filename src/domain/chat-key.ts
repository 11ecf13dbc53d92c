/**
 * The chat key of an event, computed once at ingest. Pure: no I/O, never throws.
 *
 *   message kinds (message, message.any, message.waiting,    the chat of the message: `chatId` where the engine
 *   message.unknown, event.response…, any `message.*`)       gives it, else the chat inside WAHA's message id
 *                                                            (`true_<chat>_<id>[_<participant>]`), else `to` for
 *                                                            the session's own messages and `from` otherwise (an
 *                                                            event response with none: its eventCreationKey's)
 *   message.ack, message.ack.group, message.reaction,        the chat of the message they concern: the ack's id,
 *   message.edited, message.revoked                          `reaction.messageId`, `editedMessageId`,
 *                                                            `revokedMessageId` or `after`/`before`; then their own
 *   poll.vote, poll.vote.failed                              the vote's chat (it is a message), else the poll's
 *   group.* (group.join, group.v2.participants…)             the group
 *   every other kind (session.status, presence.update,       INSTANCE_CHAT, one fixed string: the caller stores it
 *   call.*, label.*, chat.archive, engine.event, kinds       per instance, so it is one key per instance (presence
 *   outside the catalog)                                     is a state, not a message: nothing in a chat waits for it)
 *
 * A payload in which no rule finds a chat gets INSTANCE_CHAT too: a coarser key only puts more events together,
 * while a guessed chat could part an ack from its message.
 */
import { isBroadcast, isGroup, lidOf, phoneOf } from './jid.ts';
import { isObj, type Obj } from './payload-rules.ts';

/** The key of the events that concern no one chat: one per instance. No chat id is `*`. */
export const INSTANCE_CHAT = '*';

/**
 * A chat id in one spelling for every engine: `<digits>@c.us` for a phone (NOWEB and GOWS write
 * `@s.whatsapp.net`, sometimes with a `:<device>`; Herald's message.unknown bare digits), `<id>@lid` without a
 * device, anything else with an `@` as it is (`@g.us`, `@newsletter`, `status@broadcast`). Null for what names no
 * chat: WAHA's `me`, a message id, an empty string.
 */
function chatOf(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  if (/^\d{5,20}$/.test(v)) return `${v}@c.us`;
  const phone = phoneOf(v);
  if (phone !== null) return `${phone}@c.us`;
  return lidOf(v) ?? (/^[^@]+@[^@]+$/.test(v) ? v : null);
}

/**
 * The chat inside a WAHA message id: `true_<chat>_<id>` or `false_<chat>_<id>`, with `_<participant>` after it in
 * a group; WEBJS's raw id object says it as `remote`. Null for a bare id (NOWEB's `editedMessageId`, a custom id).
 */
function chatInId(id: unknown): string | null {
  if (isObj(id)) return chatOf(id.remote) ?? chatInId(id._serialized);
  if (typeof id !== 'string') return null;
  return chatOf(/^(?:true|false)_([^_]+@[^_]+)_./.exec(id)?.[1]);
}

const first = (candidates: (string | null)[]): string | null => candidates.find((c) => c !== null) ?? null;

/**
 * The chat of one message object, or of a message id. The id comes before `from`/`to` because it is the one field a
 * message shares with its ack on every engine, while `from`/`to` differ: WEBJS puts the session in `from` of its own
 * messages, NOWEB and GOWS the chat; GOWS puts the sender or the reader in `to` of group messages and acks.
 */
function messageChat(m: unknown, own = false): string | null {
  if (!isObj(m)) return chatInId(m);
  const data = isObj(m._data) ? m._data : {};
  const explicit = first([chatOf(m.chatId), chatOf(m.chat_id), chatInId(m.id), chatInId(data.id)]);
  if (explicit !== null) return explicit;
  const [from, to] = [chatOf(m.from), chatOf(m.to)];
  // A group or a story is the chat whichever side names it; the other side is a member.
  if (isGroup(from) || isBroadcast(from)) return from;
  if (isGroup(to) || isBroadcast(to)) return to;
  return m.fromMe === true || own ? (to ?? from) : from;
}

/**
 * Where each kind finds its chat, in order: a reaction, edit or revoke reads the message it concerns first (an ack's
 * id is that message's); a vote or an event response is itself a message in the chat, so its own fields come first.
 */
function sources(kind: string, p: Obj): unknown[] {
  switch (kind) {
    case 'message.reaction':
      return [isObj(p.reaction) ? p.reaction.messageId : null, p];
    case 'message.edited':
      return [p.editedMessageId, p];
    case 'message.revoked':
      return [p.revokedMessageId, p.after, p.before, p];
    case 'poll.vote':
    case 'poll.vote.failed':
      return [p.vote, p.poll];
    case 'event.response':
    case 'event.response.failed':
      return [p, p.eventCreationKey];
    default:
      return [p];
  }
}

/** The group of a group event: v2's `group.id`, WEBJS's raw notification (`chatId`, `id.remote`), NOWEB's raw `id`. */
function groupChat(p: Obj): string | null {
  const group = isObj(p.group) ? p.group : {};
  return first([chatOf(group.id), chatOf(p.chatId), chatInId(p.id), isGroup(p.id) ? chatOf(p.id) : null]);
}

/** The chat key of an event of kind `event` with `payload` as the engine or client sent it; INSTANCE_CHAT if none. */
export function chatKey(event: string, payload: unknown): string {
  if (!isObj(payload)) return INSTANCE_CHAT;
  if (event.startsWith('group.')) return groupChat(payload) ?? INSTANCE_CHAT;
  const isMessage = event === 'message' || event.startsWith('message.') || event.startsWith('poll.vote');
  if (!isMessage && !event.startsWith('event.response')) return INSTANCE_CHAT;
  // message.unknown reports a message the session tried to send, to `to`; it has no fromMe.
  const own = event === 'message.unknown';
  return first(sources(event, payload).map((m) => messageChat(m, own))) ?? INSTANCE_CHAT;
}
