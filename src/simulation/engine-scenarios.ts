/**
 * What WAHA's engines publish beyond the core kinds and the further ones: a message still being decrypted, a
 * group's read receipts, groups in WAHA's v2 shapes, archiving, event-message answers and raw engine events.
 * Payloads follow the examples in WAHA's documentation.
 */
import type { Scenario, Session, SimulatedEvent } from './session.ts';

const group = (s: Session) => ({
  id: `1203630${s.int(10_000_000, 99_999_999)}@g.us`,
  subject: 'Order support',
});

/** "Waiting for this message": the engine publishes it before it can read the message. */
function waiting(s: Session): SimulatedEvent[] {
  const from = s.pick(s.contacts).chat;
  const payload = {
    id: `false_${from}_${s.hex(20)}`,
    timestamp: s.seconds(),
    from,
    fromMe: false,
    to: s.me.chat,
    body: null,
    hasMedia: false,
  };
  return [{ event: 'message.waiting', payload }];
}

/** A message the session sent to a group, read by one of its participants. */
function groupAck(s: Session): SimulatedEvent[] {
  const g = group(s);
  const participant = `${s.int(10 ** 13, 10 ** 14 - 1)}@lid`;
  const id = `true_${g.id}_${s.hex(20)}_${participant}`;
  return [
    {
      event: 'message.ack.group',
      payload: { id, from: g.id, participant, fromMe: true, ack: 3, ackName: 'READ' },
    },
  ];
}

/** The session is added to a group; someone joins, it is renamed, someone is promoted, then the session leaves. */
function groupV2(s: Session): SimulatedEvent[] {
  const g = group(s);
  const at = s.seconds();
  const member = { id: s.pick(s.contacts).chat, role: 'participant' };
  s.schedule(1, 'group.v2.participants', {
    type: 'join',
    timestamp: at,
    group: { id: g.id },
    participants: [member],
    _data: {},
  });
  s.schedule(2, 'group.v2.update', {
    group: { id: g.id, subject: 'Order support (EU)' },
    timestamp: at + 60,
    _data: {},
  });
  s.schedule(3, 'group.v2.participants', {
    type: 'promote',
    timestamp: at + 90,
    group: { id: g.id },
    participants: [{ ...member, role: 'admin' }],
    _data: {},
  });
  s.schedule(5, 'group.v2.leave', { group: { id: g.id }, timestamp: at + 120, _data: {} });
  const joined = {
    ...g,
    description: 'Questions about orders',
    participants: [{ id: s.me.chat, role: 'admin' }],
  };
  return [{ event: 'group.v2.join', payload: { group: joined, timestamp: at, _data: {} } }];
}

function archive(s: Session): SimulatedEvent[] {
  const id = s.pick(s.contacts).chat;
  s.schedule(3, 'chat.archive', { id, timestamp: s.seconds() + 30, archived: false });
  return [{ event: 'chat.archive', payload: { id, timestamp: s.seconds(), archived: true } }];
}

/** Answers to an event message the session sent: one read, one the engine could not decrypt. */
function eventResponses(s: Session): SimulatedEvent[] {
  const from = s.pick(s.contacts).chat;
  const answer = (eventResponse: unknown) => ({
    id: `false_${from}_${s.hex(24)}`,
    timestamp: s.seconds(),
    from,
    participant: null,
    fromMe: false,
    eventCreationKey: { id: `true_${from}_${s.hex(24)}`, to: 'me', from, fromMe: false },
    eventResponse,
    source: 'app',
    ack: null,
    ackName: 'UNKNOWN',
    replyTo: null,
  });
  s.schedule(2, 'event.response.failed', answer(null));
  const response = {
    response: s.pick(['GOING', 'NOT_GOING', 'MAYBE']),
    timestampMs: s.now(),
    extraGuestCount: 0,
  };
  return [{ event: 'event.response', payload: answer(response) }];
}

function engineEvent(s: Session): SimulatedEvent[] {
  return [
    {
      event: 'engine.event',
      payload: { event: 'messages.upsert', data: { type: 'notify', count: s.int(1, 3) } },
    },
  ];
}

export const ENGINE_SCENARIOS: readonly [name: string, weight: number, run: Scenario][] = [
  ['message waiting', 1, waiting],
  ['group ack', 2, groupAck],
  ['group v2', 1, groupV2],
  ['archive', 1, archive],
  ['event responses', 1, eventResponses],
  ['engine event', 1, engineEvent],
];
