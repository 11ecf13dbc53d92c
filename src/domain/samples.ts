/**
 * One realistic payload per kind, as Herald delivers it: the engine kinds follow the examples in WAHA's own
 * documentation (the engine Herald's sessions run on), completed the way Herald completes them (from_phone, the
 * media object's status). For trying an endpoint (Send test), for the docs' examples, and for tests of the rules.
 */
type Obj = Record<string, unknown>;

const ME = '15550001111@c.us';
const PEER = '15557654321@c.us';
const GROUP_ID = '120363041234567890@g.us';
const GROUP = { id: GROUP_ID, subject: 'Order support' };
const IN_ID = 'false_15557654321@c.us_3EB0C767D26A1D8F4A2B'; // an incoming message
const OUT_ID = 'true_15557654321@c.us_3EB0A1B2C3D4E5F60718'; // a message the session sent
const CALL = {
  id: 'ABCDEF0123456789ABCDEF0123456789',
  from: PEER,
  timestamp: 1763719300,
  isVideo: false,
  isGroup: false,
};
const LABEL = { id: '3', name: 'Paid', color: 2, colorHex: '#64c4ff' };
const POLL = { id: 'true_15557654321@c.us_3EB0C0C0C0C012345678', to: PEER, from: 'me', fromMe: true };
const VOTE = { id: 'false_15557654321@c.us_3EB0B0B0B0B012345678', to: 'me', from: PEER, fromMe: false };
const EVENT_KEY = { id: 'true_15557654321@c.us_3EB0EEEEEEEE12345678', to: 'me', from: PEER, fromMe: false };
const PARTICIPANT = { id: PEER, role: 'participant' };

/** The parts of a message every engine sends (Herald adds from_phone to message and message.any only). */
const message = (id: string, fromMe: boolean, body: string): Obj => ({
  id,
  timestamp: 1763719200,
  from: fromMe ? ME : PEER,
  fromMe,
  source: 'app',
  to: fromMe ? PEER : ME,
  participant: null,
  body,
  hasMedia: false,
  ack: fromMe ? 1 : null,
  ackName: fromMe ? 'SERVER' : 'UNKNOWN',
  replyTo: null,
  _data: {},
});

/** Kept as data so the samples are easy to read and to compare with the rules. */
const SAMPLES: Record<string, Obj> = {
  'session.status': {
    status: 'WORKING',
    statuses: [
      { status: 'STOPPED', timestamp: 1763719000000 },
      { status: 'STARTING', timestamp: 1763719001000 },
      { status: 'WORKING', timestamp: 1763719003000 },
    ],
    data: null,
    phone: '15550001111',
  },
  message: { ...message(IN_ID, false, 'Hi! Is my order on its way?'), from_phone: '15557654321' },
  // Shows media too: the session's own media has no stored copy.
  'message.any': {
    ...message(OUT_ID, true, 'Yes, here is the tracking label.'),
    from_phone: '15550001111',
    hasMedia: true,
    media: { status: 'outgoing', mimetype: 'image/jpeg' },
  },
  'message.ack': { id: OUT_ID, from: ME, to: PEER, participant: null, fromMe: true, ack: 3, ackName: 'READ' },
  'message.reaction': {
    id: 'false_15557654321@c.us_3EB0F00D5A5A5A5A5A5A',
    from: PEER,
    fromMe: false,
    participant: PEER,
    to: ME,
    timestamp: 1763719290.853,
    reaction: { text: '👍', messageId: OUT_ID },
  },
  'message.edited': {
    ...message('false_15557654321@c.us_3EB0E1D1E1D1E1D1E1D1', false, 'Order 1042, not 1024'),
    editedMessageId: '3EB0C767D26A1D8F4A2B',
  },
  'message.revoked': {
    after: message('false_15557654321@c.us_3EB0DE1EDE1EDE1EDE1E', false, ''),
    before: null,
    revokedMessageId: '3EB0C767D26A1D8F4A2B',
  },
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
  'call.received': { ...CALL, _data: {} },
  'call.accepted': { ...CALL, timestamp: 1763719305, _data: {} },
  'call.rejected': { ...CALL, timestamp: 1763719305, _data: {} },
  'label.upsert': LABEL,
  'label.deleted': LABEL,
  'label.chat.added': { labelId: '3', chatId: PEER, label: LABEL },
  'label.chat.deleted': { labelId: '3', chatId: PEER, label: null },
  'poll.vote': { vote: { ...VOTE, selectedOptions: ['Tuesday'], timestamp: 1763719320 }, poll: POLL },
  'poll.vote.failed': { vote: { ...VOTE, selectedOptions: [], timestamp: 1763719320 }, poll: POLL },
  'presence.update': {
    id: PEER,
    presences: [{ participant: PEER, lastKnownPresence: 'typing', lastSeen: null }],
  },
  'message.waiting': { ...message(IN_ID, false, ''), body: null },
  'message.ack.group': {
    id: `true_${GROUP_ID}_3EB0A1B2C3D4E5F60718_99999999999999@lid`,
    from: GROUP_ID,
    participant: '99999999999999@lid',
    fromMe: true,
    ack: 3,
    ackName: 'READ',
  },
  'group.v2.join': {
    group: {
      ...GROUP,
      description: 'Questions about orders',
      invite: 'https://chat.whatsapp.com/invitecode',
      membersCanAddNewMember: true,
      membersCanSendMessages: true,
      newMembersApprovalRequired: false,
      participants: [PARTICIPANT, { id: ME, role: 'admin' }],
    },
    timestamp: 1763719400,
    _data: {},
  },
  'group.v2.leave': { group: { id: GROUP_ID }, timestamp: 1763719400, _data: {} },
  'group.v2.update': {
    group: { id: GROUP_ID, subject: 'Order support (EU)' },
    timestamp: 1763719400,
    _data: {},
  },
  'group.v2.participants': {
    type: 'join',
    timestamp: 1763719400,
    group: { id: GROUP_ID },
    participants: [PARTICIPANT],
    _data: {},
  },
  'chat.archive': { id: PEER, timestamp: 1763719500, archived: true },
  'event.response': {
    ...message('false_15557654321@c.us_58BBBBBBBBBBBBBBBBBB', false, ''),
    eventCreationKey: EVENT_KEY,
    eventResponse: { response: 'GOING', timestampMs: 1763719600429, extraGuestCount: 0 },
  },
  'event.response.failed': {
    ...message('false_15557654321@c.us_58BBBBBBBBBBBBBBBBBB', false, ''),
    eventCreationKey: EVENT_KEY,
    eventResponse: null,
  },
  'engine.event': { event: 'messages.upsert', data: { type: 'notify' } },
  'webhook.disabled': {
    webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
    destination_url: 'https://hooks.example.com/herald',
    reason: 'gone',
    disabled_at: '2026-11-21T10:05:00.000Z',
  },
  'webhook.failing': {
    webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
    destination_url: 'https://hooks.example.com/herald',
    consecutive_failures: 20,
    failing_since: '2026-11-21T09:12:40.000Z',
  },
  'webhook.recovered': {
    webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
    destination_url: 'https://hooks.example.com/herald',
    after_failures: 23,
  },
  'delivery.failed': {
    delivery_id: 'dlv_01jd5q7k4w8y2b6d0f3h5k7m9p',
    event_id: 'evt_01jd5q7h2k9x4m8n3p6r0t1v2w',
    event: 'message',
    webhook_id: 'whk_01jd5q7j0c3v8n2m5x7z9b4d6f',
    failure_reason: 'attempts_exhausted',
    last_status_code: 503,
    last_error: null,
  },
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
