/**
 * The simulated activity as Evolution API would post it to an instance's webhook: `{ event, instance, data,
 * destination, date_time, sender, server_url, apikey }`, `data` as Evolution's Baileys channel writes it (Baileys'
 * message key and content, statuses by Evolution's names, files inline as `message.base64`, the `webhook.base64`
 * setting). An incoming message is one `messages.upsert` (Herald makes its message and message.any); kinds Evolution
 * never sends are left out. Pure: the caller says when each event happens.
 */
import type { Obj, SimulatedEvent } from './session.ts';

export interface EvolutionSession {
  /** Evolution's instance name. */
  name: string;
  /** The session's own id (Evolution's `sender`, the `wuid`), known once it is open. */
  wuid: string | null;
  /** The bytes of an inline file: `large` ones are bigger than any limit Herald would keep. */
  file: (large: boolean) => Buffer;
}

/** Baileys writes a phone's chat `<digits>@s.whatsapp.net`. */
const jid = (chat: unknown): string =>
  typeof chat === 'string' ? chat.replace(/@c\.us$/, '@s.whatsapp.net') : String(chat);
/** The message id inside a simulated `true_<chat>_<id>` / `false_<chat>_<id>`: Baileys' ids are bare. */
const bareId = (id: unknown): string => String(id).split('_').at(-1) ?? String(id);

const STATES: Record<string, [event: string, state: string | null]> = {
  STARTING: ['connection.update', 'connecting'],
  SCAN_QR_CODE: ['qrcode.updated', null],
  WORKING: ['connection.update', 'open'],
  STOPPED: ['connection.update', 'close'],
  FAILED: ['connection.update', 'refused'],
};
const ACKS: Record<number, string> = { 1: 'SERVER_ACK', 2: 'DELIVERY_ACK', 3: 'READ', 4: 'PLAYED' };
const CALLS: Record<string, string> = {
  'call.received': 'offer',
  'call.accepted': 'accept',
  'call.rejected': 'reject',
};
const MEDIA_TYPES: Record<string, string> = {
  image: 'imageMessage',
  video: 'videoMessage',
  audio: 'audioMessage',
};

/** The Evolution body of one simulated event, or null for a kind Evolution never sends. */
export function toEvolution(e: SimulatedEvent, session: EvolutionSession, now: number): Obj | null {
  const mapped = eventOf(e, session, now);
  if (mapped === null) return null;
  return {
    event: mapped[0],
    instance: session.name,
    data: mapped[1],
    destination: 'http://herald.internal:8080/instances/ins_…/engine/evolution',
    date_time: new Date(now).toISOString(),
    ...(session.wuid ? { sender: session.wuid } : {}),
    server_url: 'http://localhost:8080',
    apikey: null,
  };
}

function eventOf(e: SimulatedEvent, session: EvolutionSession, now: number): [string, unknown] | null {
  const p = e.payload;
  switch (e.event) {
    case 'session.status':
      return sessionStatus(p, session);
    case 'message':
      return ['messages.upsert', message(p, session, now)];
    case 'message.any':
      // An incoming message's message.any is Herald's own second event of the same messages.upsert.
      return p.fromMe === true ? ['send.message', message(p, session, now)] : null;
    case 'message.ack':
      return [
        'messages.update',
        { keyId: bareId(p.id), remoteJid: jid(p.to), fromMe: true, status: ACKS[p.ack as number] },
      ];
    case 'message.reaction': {
      const r = p.reaction as Obj;
      const target = { remoteJid: jid(p.from), fromMe: true, id: bareId(r.messageId) };
      return [
        'messages.upsert',
        {
          key: { remoteJid: jid(p.from), fromMe: false, id: bareId(p.id) },
          message: { reactionMessage: { key: target, text: r.text, senderTimestampMs: String(now) } },
          messageType: 'reactionMessage',
          messageTimestamp: Math.floor(now / 1000),
        },
      ];
    }
    case 'message.edited':
      return [
        'messages.edited',
        {
          key: { remoteJid: jid(p.from), fromMe: false, id: bareId(p.editedMessageId) },
          type: 14,
          editedMessage: { conversation: p.body },
          timestampMs: String(now),
        },
      ];
    case 'message.revoked':
      return ['messages.delete', { remoteJid: jid(p.from), fromMe: false, id: bareId(p.revokedMessageId) }];
    default:
      return groupOrOther(e);
  }
}

function sessionStatus(p: Obj, session: EvolutionSession): [string, unknown] | null {
  const known = STATES[p.status as string];
  if (!known) return null;
  const [event, state] = known;
  session.wuid =
    state === 'open' ? `${p.phone}@s.whatsapp.net` : state === 'connecting' ? null : session.wuid;
  if (state === null) {
    return [
      event,
      {
        qrcode: {
          instance: session.name,
          pairingCode: null,
          code: '2@simulated',
          base64: 'data:image/png;base64,',
        },
      },
    ];
  }
  return [
    event,
    { instance: session.name, state, statusReason: 200, ...(session.wuid ? { wuid: session.wuid } : {}) },
  ];
}

/** A message as Evolution's prepareMessage() leaves it, its file inline. */
function message(p: Obj, session: EvolutionSession, now: number): Obj {
  const fromMe = p.fromMe === true;
  const chat = fromMe ? p.to : p.from;
  const media = p.media as Obj | undefined;
  const key = {
    remoteJid: jid(chat),
    fromMe,
    id: bareId(p.id),
    ...(typeof p.participant === 'string' ? { participant: jid(p.participant) } : {}),
  };
  let content: Obj = { conversation: p.body };
  if (p.hasMedia === true && media) {
    const mimetype = String(media.mimetype);
    const type = MEDIA_TYPES[mimetype.split('/')[0]] ?? 'documentMessage';
    content = {
      [type]: { url: 'https://mmg.whatsapp.net/simulated.enc', mimetype, caption: p.body || undefined },
    };
    if (media.status === 'ready' || media.status === 'too_large' || media.status === 'outgoing') {
      content.base64 = session.file(media.status === 'too_large').toString('base64');
    }
  }
  return {
    key,
    pushName: fromMe ? 'Você' : 'Contact',
    status: fromMe ? 'PENDING' : 'DELIVERY_ACK',
    message: content,
    messageType: Object.keys(content)[0],
    messageTimestamp: typeof p.timestamp === 'number' ? p.timestamp : Math.floor(now / 1000),
    source: 'android',
  };
}

/** Groups, calls, labels and presence as Baileys' events carry them. */
function groupOrOther(e: SimulatedEvent): [string, unknown] | null {
  const p = e.payload;
  const group = (p.group ?? {}) as Obj;
  switch (e.event) {
    case 'group.join':
      return [
        'groups.upsert',
        [{ id: group.id, subject: group.subject, participants: [{ id: jid(p.participant), admin: null }] }],
      ];
    case 'group.update':
      return ['groups.update', [{ id: group.id, subject: group.subject, desc: group.description }]];
    case 'group.participants':
    case 'group.leave': {
      const leave = e.event === 'group.leave';
      const who = leave ? [p.participant] : ((p.participants as unknown[]) ?? []);
      return [
        'group-participants.update',
        { id: group.id, participants: who.map(jid), action: leave ? 'remove' : p.action },
      ];
    }
    case 'call.received':
    case 'call.accepted':
    case 'call.rejected':
      return [
        'call',
        {
          id: p.id,
          from: jid(p.from),
          chatId: jid(p.from),
          status: CALLS[e.event],
          isVideo: p.isVideo,
          isGroup: false,
          offline: false,
        },
      ];
    case 'label.upsert':
    case 'label.deleted':
      return [
        'labels.edit',
        { id: p.id, name: p.name, color: p.color, deleted: e.event === 'label.deleted' },
      ];
    case 'label.chat.added':
    case 'label.chat.deleted':
      return [
        'labels.association',
        {
          type: e.event === 'label.chat.added' ? 'add' : 'remove',
          chatId: jid(p.chatId),
          labelId: p.labelId,
        },
      ];
    case 'presence.update': {
      const [first] = (p.presences as Obj[]) ?? [];
      return [
        'presence.update',
        { id: jid(p.id), presences: { [jid(p.id)]: { lastKnownPresence: first?.lastKnownPresence } } },
      ];
    }
    default:
      return null;
  }
}
