/** Sample payloads, one realistic one per event kind: for trying an endpoint and for tests of the rules. */
type Obj = Record<string, unknown>;

const ME = '15550001111@c.us';
const PEER = '15557654321@c.us';
const GROUP = { id: '120363041234567890@g.us', subject: 'Order support' };
const IN_ID = 'false_15557654321@c.us_3EB0C767D26A1D8F4A2B'; // an incoming message
const OUT_ID = 'true_15557654321@c.us_3EB0A1B2C3D4E5F60718'; // a message the session sent
const CALL = { id: 'CALL_9F3A1B2C', from: PEER, timestamp: 1763719300, isVideo: false, isGroup: false };
const LABEL = { id: '3', name: 'Paid', color: 2, colorHex: '#64c4ff' };
const POLL = { id: 'true_15557654321@c.us_3EB0C0C0C0C012345678', to: PEER, fromMe: true };
const VOTE = { id: 'false_15557654321@c.us_3EB0B0B0B0B012345678', from: PEER };

/** One realistic payload per kind; kept as data so the samples are easy to read and to compare with the rules. */
const SAMPLES: Record<string, Obj> = {
  'session.status': { status: 'WORKING', phone: '15550001111' },
  message: {
    id: IN_ID,
    timestamp: 1763719200,
    from: PEER,
    from_phone: '15557654321',
    fromMe: false,
    to: ME,
    body: 'Hi! Is my order on its way?',
    hasMedia: false,
  },
  // Shows media too: the session's own media has no stored copy (seed 2.5 "outgoing").
  'message.any': {
    id: OUT_ID,
    timestamp: 1763719260,
    from: ME,
    from_phone: '15550001111',
    fromMe: true,
    to: PEER,
    body: 'Yes, here is the tracking label.',
    hasMedia: true,
    media: { status: 'outgoing', mimetype: 'image/jpeg' },
  },
  'message.ack': { id: OUT_ID, from: ME, to: PEER, ack: 3, ackName: 'READ' },
  'message.reaction': {
    id: 'false_15557654321@c.us_3EB0F00D',
    from: PEER,
    to: ME,
    reaction: { text: '👍', messageId: OUT_ID },
  },
  'message.edited': {
    id: 'false_15557654321@c.us_3EB0E1D1',
    from: PEER,
    to: ME,
    body: 'Order 1042?',
    editedMessageId: IN_ID,
  },
  'message.revoked': { id: 'false_15557654321@c.us_3EB0DE1E', from: PEER, to: ME, revokedMessageId: IN_ID },
  'message.unknown': {
    message_id: 'msg_01JD5Q7H2K9X4M8N3P6R0T1V2W',
    client_reference: 'order-1042-confirmation',
    to: '15557654321',
    type: 'text',
    error_code: 'TIMEOUT',
  },
  'group.join': { group: GROUP, participant: ME },
  'group.leave': { group: GROUP, participant: ME },
  'group.update': { group: { ...GROUP, description: 'Questions about orders' } },
  'group.participants': { group: GROUP, action: 'add', participants: [PEER], by: ME },
  'call.received': CALL,
  'call.accepted': { ...CALL, timestamp: 1763719305 },
  'call.rejected': { ...CALL, timestamp: 1763719305 },
  'label.upsert': LABEL,
  'label.deleted': LABEL,
  'label.chat.added': { labelId: '3', chatId: PEER },
  'label.chat.deleted': { labelId: '3', chatId: PEER },
  'poll.vote': { vote: { ...VOTE, selectedOptions: ['Tuesday'] }, poll: POLL },
  'poll.vote.failed': { vote: { ...VOTE, selectedOptions: [] }, poll: POLL },
  'presence.update': { id: PEER, presences: [{ participant: PEER, lastKnownPresence: 'typing' }] },
};

/**
 * The samples a user can send to try an endpoint: one realistic payload per kind, each passing validatePayload.
 * Throws a RangeError for a kind outside the catalog (check it with isEventKind first).
 */
export function samplePayload(kind: string): Record<string, unknown> {
  const sample = SAMPLES[kind];
  if (!sample) throw new RangeError(`unknown event kind "${kind}"`);
  return structuredClone(sample); // a fresh copy, so a caller may change it freely
}
