/**
 * Realistic activity of one session, as its engine would publish it (SPEC §7): pure and seeded, so a run can be
 * replayed; the `simulate` command only sends what this produces. The session starts STARTING → SCAN_QR_CODE →
 * WORKING; then conversations follow. The first round walks every scenario once (every kind, every media status,
 * both message.unknown error codes), so even a short run shows the whole catalog; after it, scenarios are drawn by
 * realistic weights. Follow-ups (acks SERVER → DEVICE → READ, a call's answer, a reaction to a message…) come a
 * few steps later, interleaved with other activity.
 */
import type { Random } from './random.ts';

export interface SimulatedEvent {
  event: string;
  payload: Record<string, unknown>;
}

type Obj = Record<string, unknown>;
type Scenario = (s: SessionSimulation) => SimulatedEvent[];

const STATUS_CHAT = 'status@broadcast';
const MIMETYPES = ['image/jpeg', 'image/png', 'audio/ogg; codecs=opus', 'video/mp4', 'application/pdf'];
const TEXTS = [
  'Hi! Is my order on its way?',
  'Can I change the delivery address?',
  'Thanks, got it 👍',
  'What are your opening hours?',
  'Order 1042 please',
  'Is this still available?',
  'See you tomorrow',
];
const REPLIES = [
  'Yes, it ships today.',
  'Sure, send me the new address.',
  'We open at 9:00.',
  'You are welcome!',
];
const EMOJI = ['👍', '❤️', '😂', '🙏', ''];

/** Scenarios with their weight after the first round; names are for reading, the order is the tour's. */
const SCENARIOS: [string, number, Scenario][] = [
  ['incoming text', 30, (s) => s.incoming()],
  ['outgoing text', 25, (s) => s.outgoing()],
  ['incoming media ready', 5, (s) => s.incoming('ready')],
  ['incoming media too_large', 1, (s) => s.incoming('too_large')],
  ['incoming media failed', 1, (s) => s.incoming('failed')],
  ['incoming media unavailable', 1, (s) => s.incoming('unavailable')],
  ['outgoing media', 4, (s) => s.outgoing(true)],
  ['reaction', 6, (s) => s.reaction()],
  ['edit', 3, (s) => s.edit()],
  ['revoke', 2, (s) => s.revoke()],
  ['story', 3, (s) => s.story()],
  ['unknown TIMEOUT', 1, (s) => s.unknown('TIMEOUT')],
  ['unknown WORKER_DIED', 1, (s) => s.unknown('WORKER_DIED')],
  ['group', 3, (s) => s.group()],
  ['call accepted', 1, (s) => s.call('call.accepted')],
  ['call rejected', 1, (s) => s.call('call.rejected')],
  ['label', 2, (s) => s.label()],
  ['poll', 2, (s) => s.poll()],
  ['presence', 6, (s) => s.presence()],
];
const TOTAL_WEIGHT = SCENARIOS.reduce((sum, [, w]) => sum + w, 0);

export class SessionSimulation {
  readonly #random: Random;
  readonly #now: () => number;
  readonly #me: { chat: string; phone: string };
  readonly #contacts: { chat: string; phone: string }[];
  readonly #tour: Scenario[];
  /** Events due a few steps from now: [steps left, event]. */
  #later: [number, SimulatedEvent][] = [];
  #recentIn: Obj[] = [];
  #recentOut: Obj[] = [];
  #started = false;

  constructor(random: Random, now: () => number) {
    this.#random = random;
    this.#now = now;
    this.#me = contact(this.#int(1000, 9999));
    this.#contacts = Array.from({ length: 8 }, () => contact(this.#int(1000, 9999)));
    this.#tour = this.#shuffle(SCENARIOS.map(([, , run]) => run));
  }

  /** The next step of activity: one or more events, in the order the engine would publish them. */
  next(): SimulatedEvent[] {
    if (!this.#started) {
      this.#started = true;
      return ['STARTING', 'SCAN_QR_CODE', 'WORKING'].map((status) => ({
        event: 'session.status',
        payload: status === 'WORKING' ? { status, phone: this.#me.phone } : { status },
      }));
    }
    const due = this.#later.filter(([steps]) => steps <= 0).map(([, e]) => e);
    this.#later = this.#later.filter(([steps]) => steps > 0).map(([steps, e]) => [steps - 1, e]);
    const scenario = this.#tour.shift() ?? this.#weighted();
    return [...due, ...scenario(this)];
  }

  incoming(mediaStatus?: string, from = this.#pick(this.#contacts), chat = from.chat): SimulatedEvent[] {
    const payload: Obj = {
      id: `false_${chat}_${this.#hex(20)}`,
      timestamp: this.#seconds(),
      from: chat,
      from_phone: from.phone,
      fromMe: false,
      to: this.#me.chat,
      body: mediaStatus ? '' : this.#pick(TEXTS),
      hasMedia: mediaStatus !== undefined,
    };
    if (mediaStatus) payload.media = this.#media(mediaStatus);
    if (chat !== STATUS_CHAT) this.#remember(this.#recentIn, payload);
    // An incoming message is both "message" and "message.any" (SPEC §7).
    return [
      { event: 'message', payload },
      { event: 'message.any', payload },
    ];
  }

  outgoing(withMedia = false): SimulatedEvent[] {
    const to = this.#pick(this.#contacts);
    const payload: Obj = {
      id: `true_${to.chat}_${this.#hex(20)}`,
      timestamp: this.#seconds(),
      from: this.#me.chat,
      from_phone: this.#me.phone,
      fromMe: true,
      to: to.chat,
      body: withMedia ? 'Here is the picture' : this.#pick(REPLIES),
      hasMedia: withMedia,
    };
    if (withMedia) payload.media = { status: 'outgoing', mimetype: this.#pick(MIMETYPES) };
    this.#remember(this.#recentOut, payload);
    // SERVER → DEVICE → READ, each a step or two after the one before.
    let steps = 0;
    for (const [ack, ackName] of [
      [1, 'SERVER'],
      [2, 'DEVICE'],
      [3, 'READ'],
    ] as const) {
      steps += 1 + this.#int(0, 1);
      this.#schedule(steps, 'message.ack', {
        id: payload.id,
        from: this.#me.chat,
        to: to.chat,
        ack,
        ackName,
      });
    }
    // An outgoing message is only "message.any" (SPEC §7).
    return [{ event: 'message.any', payload }];
  }

  reaction(): SimulatedEvent[] {
    const target = this.#pick(
      this.#recentOut.length
        ? this.#recentOut
        : [{ id: `true_x_${this.#hex(8)}`, to: this.#pick(this.#contacts).chat }],
    );
    const from = target.to as string;
    return [
      {
        event: 'message.reaction',
        payload: {
          id: `false_${from}_${this.#hex(20)}`,
          from,
          to: this.#me.chat,
          reaction: { text: this.#pick(EMOJI), messageId: target.id },
        },
      },
    ];
  }

  edit(): SimulatedEvent[] {
    const [message, first] = this.#someIncoming();
    const payload = {
      id: `false_${message.from}_${this.#hex(20)}`,
      from: message.from,
      to: this.#me.chat,
      body: `${message.body || 'Photo'} (edited)`,
      editedMessageId: message.id,
    };
    return [...first, { event: 'message.edited', payload }];
  }

  revoke(): SimulatedEvent[] {
    const [message, first] = this.#someIncoming();
    this.#recentIn = this.#recentIn.filter((m) => m !== message);
    const payload = {
      id: `false_${message.from}_${this.#hex(20)}`,
      from: message.from,
      to: this.#me.chat,
      revokedMessageId: message.id,
    };
    return [...first, { event: 'message.revoked', payload }];
  }

  /** A recent incoming message, or a new one (with the events that publish it) when there is none yet. */
  #someIncoming(): [Obj, SimulatedEvent[]] {
    if (this.#recentIn.length) return [this.#pick(this.#recentIn), []];
    const events = this.incoming();
    return [events[0].payload, events];
  }

  /** A contact's story: chat status@broadcast, delivered only to webhooks with ignore_status false. */
  story(): SimulatedEvent[] {
    const poster = this.#pick(this.#contacts);
    const events = this.incoming(this.#random() < 0.5 ? 'ready' : undefined, poster, STATUS_CHAT);
    for (const e of events) e.payload.participant = poster.chat;
    return events;
  }

  unknown(errorCode: 'TIMEOUT' | 'WORKER_DIED'): SimulatedEvent[] {
    const to = this.#pick(this.#contacts);
    const payload = {
      message_id: `msg_${this.#hex(26).toUpperCase()}`,
      client_reference: `order-${this.#int(1000, 9999)}-confirmation`,
      to: to.phone,
      type: 'text',
      error_code: errorCode,
    };
    return [{ event: 'message.unknown', payload }];
  }

  group(): SimulatedEvent[] {
    const group = { id: `1203630${this.#int(10_000_000, 99_999_999)}@g.us`, subject: 'Order support' };
    const member = this.#pick(this.#contacts).chat;
    this.#schedule(1, 'group.participants', {
      group,
      action: 'add',
      participants: [member],
      by: this.#me.chat,
    });
    this.#schedule(2, 'group.update', { group: { ...group, description: 'Questions about orders' } });
    this.#schedule(4, 'group.leave', { group, participant: this.#me.chat });
    return [{ event: 'group.join', payload: { group, participant: this.#me.chat } }];
  }

  call(answer: 'call.accepted' | 'call.rejected'): SimulatedEvent[] {
    const call = {
      id: `CALL_${this.#hex(8).toUpperCase()}`,
      from: this.#pick(this.#contacts).chat,
      timestamp: this.#seconds(),
      isVideo: this.#random() < 0.3,
      isGroup: false,
    };
    this.#schedule(1, answer, {
      ...call,
      timestamp: call.timestamp + 5,
    });
    return [{ event: 'call.received', payload: call }];
  }

  label(): SimulatedEvent[] {
    const label = {
      id: String(this.#int(1, 20)),
      name: this.#pick(['Paid', 'New customer', 'Pending']),
      color: 2,
      colorHex: '#64c4ff',
    };
    const chatId = this.#pick(this.#contacts).chat;
    this.#schedule(1, 'label.chat.added', { labelId: label.id, chatId });
    this.#schedule(3, 'label.chat.deleted', { labelId: label.id, chatId });
    this.#schedule(4, 'label.deleted', label);
    return [{ event: 'label.upsert', payload: label }];
  }

  poll(): SimulatedEvent[] {
    const voter = this.#pick(this.#contacts).chat;
    const poll = { id: `true_${voter}_${this.#hex(20)}`, to: voter, fromMe: true };
    const vote = { id: `false_${voter}_${this.#hex(20)}`, from: voter };
    this.#schedule(2, 'poll.vote.failed', { vote: { ...vote, selectedOptions: [] }, poll });
    return [
      {
        event: 'poll.vote',
        payload: { vote: { ...vote, selectedOptions: [this.#pick(['Tuesday', 'Wednesday'])] }, poll },
      },
    ];
  }

  presence(): SimulatedEvent[] {
    const who = this.#pick(this.#contacts).chat;
    const presence = this.#pick(['online', 'typing', 'recording', 'paused', 'offline']);
    return [
      {
        event: 'presence.update',
        payload: { id: who, presences: [{ participant: who, lastKnownPresence: presence }] },
      },
    ];
  }

  #media(status: string): Obj {
    const mimetype = this.#pick(MIMETYPES);
    if (status !== 'ready') return { status, mimetype };
    const media_id = `med_${this.#hex(26).toUpperCase()}`;
    return {
      status,
      mimetype,
      media_id,
      url: `https://media.example.com/files/${media_id}`,
      expires_at: new Date(this.#now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    };
  }

  #schedule(steps: number, event: string, payload: Obj): void {
    this.#later.push([steps, { event, payload }]);
  }

  #remember(list: Obj[], payload: Obj): void {
    list.push(payload);
    if (list.length > 20) list.shift();
  }

  #weighted(): Scenario {
    let r = this.#random() * TOTAL_WEIGHT;
    for (const [, weight, run] of SCENARIOS) {
      r -= weight;
      if (r < 0) return run;
    }
    return SCENARIOS[0][2];
  }

  #shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.#int(0, i);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  #pick<T>(items: readonly T[]): T {
    return items[this.#int(0, items.length - 1)];
  }

  #int(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min + 1));
  }

  #hex(length: number): string {
    let s = '';
    while (s.length < length) s += Math.floor(this.#random() * 16).toString(16);
    return s.toUpperCase();
  }

  #seconds(): number {
    return Math.floor(this.#now() / 1000);
  }
}

function contact(n: number): { chat: string; phone: string } {
  const phone = `1555010${String(n).padStart(4, '0')}`;
  return { chat: `${phone}@c.us`, phone };
}
