/**
 * What happens in a session, one scenario at a time, as its engine would publish it (Herald's own payload format).
 * Each returns the events of this step and may schedule follow-ups (acks, a call's answer…) on the session.
 */
import { ENGINE_SCENARIOS } from './engine-scenarios.ts';
import type { Obj, Scenario, Session, SimulatedEvent } from './session.ts';

const STATUS_CHAT = 'status@broadcast';
const TEXTS = [
  'Hi! Is my order on its way?',
  'Can I change the delivery address?',
  'Thanks, got it 👍',
  'What are your opening hours?',
  'Order 1042 please',
  'Is this still available?',
];
const REPLIES = [
  'Yes, it ships today.',
  'Sure, send me the new address.',
  'We open at 9:00.',
  'You are welcome!',
];
const EMOJI = ['👍', '❤️', '😂', '🙏', '']; // '' removes a reaction

/** An incoming message is both "message" and "message.any". */
function incoming(
  s: Session,
  mediaStatus?: string,
  from = s.pick(s.contacts),
  chat = from.chat,
): SimulatedEvent[] {
  const payload: Obj = {
    id: `false_${chat}_${s.hex(20)}`,
    timestamp: s.seconds(),
    from: chat,
    from_phone: from.phone,
    fromMe: false,
    to: s.me.chat,
    body: mediaStatus ? '' : s.pick(TEXTS),
    hasMedia: mediaStatus !== undefined,
  };
  if (mediaStatus) payload.media = s.media(mediaStatus);
  if (chat !== STATUS_CHAT) s.remember(s.recentIn, payload);
  return [
    { event: 'message', payload },
    { event: 'message.any', payload },
  ];
}

/** An outgoing message is only "message.any"; its acks SERVER → DEVICE → READ follow a step or two apart. */
function outgoing(s: Session, withMedia = false): SimulatedEvent[] {
  const to = s.pick(s.contacts);
  const payload: Obj = {
    id: `true_${to.chat}_${s.hex(20)}`,
    timestamp: s.seconds(),
    from: s.me.chat,
    from_phone: s.me.phone,
    fromMe: true,
    to: to.chat,
    body: withMedia ? 'Here is the picture' : s.pick(REPLIES),
    hasMedia: withMedia,
  };
  if (withMedia) payload.media = s.media('outgoing');
  s.remember(s.recentOut, payload);
  let steps = 0;
  for (const [ack, ackName] of [
    [1, 'SERVER'],
    [2, 'DEVICE'],
    [3, 'READ'],
  ] as const) {
    steps += 1 + s.int(0, 1);
    s.schedule(steps, 'message.ack', { id: payload.id, from: s.me.chat, to: to.chat, ack, ackName });
  }
  return [{ event: 'message.any', payload }];
}

/** A recent incoming message, or a new one (with the events that publish it) when there is none yet. */
function someIncoming(s: Session): [Obj, SimulatedEvent[]] {
  if (s.recentIn.length) return [s.pick(s.recentIn), []];
  const events = incoming(s);
  return [events[0].payload, events];
}

function reaction(s: Session): SimulatedEvent[] {
  const [target, first] = s.recentOut.length ? [s.pick(s.recentOut), []] : [null, outgoing(s)];
  const message = target ?? first[0].payload;
  const from = message.to as string;
  const payload = {
    id: `false_${from}_${s.hex(20)}`,
    from,
    to: s.me.chat,
    reaction: { text: s.pick(EMOJI), messageId: message.id },
  };
  return [...first, { event: 'message.reaction', payload }];
}

function edit(s: Session): SimulatedEvent[] {
  const [message, first] = someIncoming(s);
  const payload = {
    id: `false_${message.from}_${s.hex(20)}`,
    from: message.from,
    to: s.me.chat,
    body: `${message.body || 'Photo'} (edited)`,
    editedMessageId: message.id,
  };
  return [...first, { event: 'message.edited', payload }];
}

function revoke(s: Session): SimulatedEvent[] {
  const [message, first] = someIncoming(s);
  s.recentIn = s.recentIn.filter((m) => m !== message);
  const payload = {
    id: `false_${message.from}_${s.hex(20)}`,
    from: message.from,
    to: s.me.chat,
    revokedMessageId: message.id,
  };
  return [...first, { event: 'message.revoked', payload }];
}

/** A contact's story: chat status@broadcast, delivered only to webhooks with ignore_status false. */
function story(s: Session): SimulatedEvent[] {
  const poster = s.pick(s.contacts);
  const events = incoming(s, s.random() < 0.5 ? 'ready' : undefined, poster, STATUS_CHAT);
  for (const e of events) e.payload.participant = poster.chat;
  return events;
}

function unknown(s: Session, errorCode: 'TIMEOUT' | 'WORKER_DIED'): SimulatedEvent[] {
  const payload = {
    message_id: `msg_${s.hex(26)}`,
    client_reference: `order-${s.int(1000, 9999)}-confirmation`,
    to: s.pick(s.contacts).phone,
    type: 'text',
    error_code: errorCode,
  };
  return [{ event: 'message.unknown', payload }];
}

function group(s: Session): SimulatedEvent[] {
  const g = { id: `1203630${s.int(10_000_000, 99_999_999)}@g.us`, subject: 'Order support' };
  s.schedule(1, 'group.participants', {
    group: g,
    action: 'add',
    participants: [s.pick(s.contacts).chat],
    by: s.me.chat,
  });
  s.schedule(2, 'group.update', { group: { ...g, description: 'Questions about orders' } });
  s.schedule(4, 'group.leave', { group: g, participant: s.me.chat });
  return [{ event: 'group.join', payload: { group: g, participant: s.me.chat } }];
}

function call(s: Session, answer: 'call.accepted' | 'call.rejected'): SimulatedEvent[] {
  const payload = {
    id: `CALL_${s.hex(8)}`,
    from: s.pick(s.contacts).chat,
    timestamp: s.seconds(),
    isVideo: s.random() < 0.3,
    isGroup: false,
  };
  s.schedule(1, answer, { ...payload, timestamp: payload.timestamp + 5 });
  return [{ event: 'call.received', payload }];
}

function label(s: Session): SimulatedEvent[] {
  const l = {
    id: String(s.int(1, 20)),
    name: s.pick(['Paid', 'New customer', 'Pending']),
    color: 2,
    colorHex: '#64c4ff',
  };
  const chatId = s.pick(s.contacts).chat;
  s.schedule(1, 'label.chat.added', { labelId: l.id, chatId });
  s.schedule(3, 'label.chat.deleted', { labelId: l.id, chatId });
  s.schedule(4, 'label.deleted', l);
  return [{ event: 'label.upsert', payload: l }];
}

function poll(s: Session): SimulatedEvent[] {
  const voter = s.pick(s.contacts).chat;
  const p = { id: `true_${voter}_${s.hex(20)}`, to: voter, fromMe: true };
  const vote = { id: `false_${voter}_${s.hex(20)}`, from: voter };
  s.schedule(2, 'poll.vote.failed', { vote: { ...vote, selectedOptions: [] }, poll: p });
  const selectedOptions = [s.pick(['Tuesday', 'Wednesday'])];
  return [{ event: 'poll.vote', payload: { vote: { ...vote, selectedOptions }, poll: p } }];
}

function presence(s: Session): SimulatedEvent[] {
  const who = s.pick(s.contacts).chat;
  const lastKnownPresence = s.pick(['online', 'typing', 'recording', 'paused', 'offline']);
  return [
    { event: 'presence.update', payload: { id: who, presences: [{ participant: who, lastKnownPresence }] } },
  ];
}

/** Every scenario with its weight after the opening; the opening walks them all once, shuffled. */
export const SCENARIOS: readonly [name: string, weight: number, run: Scenario][] = [
  ['incoming text', 30, (s) => incoming(s)],
  ['outgoing text', 25, (s) => outgoing(s)],
  ['incoming media ready', 5, (s) => incoming(s, 'ready')],
  ['incoming media too_large', 1, (s) => incoming(s, 'too_large')],
  ['incoming media failed', 1, (s) => incoming(s, 'failed')],
  ['incoming media unavailable', 1, (s) => incoming(s, 'unavailable')],
  ['outgoing media', 4, (s) => outgoing(s, true)],
  ['reaction', 6, reaction],
  ['edit', 3, edit],
  ['revoke', 2, revoke],
  ['story', 3, story],
  ['unknown TIMEOUT', 1, (s) => unknown(s, 'TIMEOUT')],
  ['unknown WORKER_DIED', 1, (s) => unknown(s, 'WORKER_DIED')],
  ['group', 3, group],
  ['call accepted', 1, (s) => call(s, 'call.accepted')],
  ['call rejected', 1, (s) => call(s, 'call.rejected')],
  ['label', 2, label],
  ['poll', 2, poll],
  ['presence', 6, presence],
  ...ENGINE_SCENARIOS,
];
