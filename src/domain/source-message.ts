/**
 * A message taken from a source, read in the source's format: which instance it is for, the event it carries and
 * that event's id. Pure. The id is the body's own (Herald's `event_id`, WAHA's envelope id as its webhook route
 * derives it), else one derived from the source, the instance and the broker's id for the message, so that a
 * message the broker delivers again, after a crash, is the same event.
 */
import { createHash } from 'node:crypto';
import { isObj } from './payload-rules.ts';
import type { FieldError } from './types.ts';
import { engineEventId, readWahaEnvelope } from './waha-envelope.ts';

/** Where the instance comes from when the source names none: its id, or its name (engines name their session). */
export type InstanceRef = { id: string } | { name: string } | null;

export interface SourceEvent {
  instance: InstanceRef;
  event: string;
  payload: unknown;
  timestamp: number | null;
  order_id: string | null;
  sessionPhone: string | null;
  /** An engine's body (WAHA, Evolution): published as the engine routes publish it. */
  engine: boolean;
  /** The event's id at the instance it goes to. */
  eventId(instanceId: string): string;
}

export type SourceReader = (
  body: unknown,
  sourceId: string,
  brokerId: string,
) => { event: SourceEvent } | { errors: FieldError[] };

const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,100}$/;
const INSTANCE_ID = /^ins_[A-Za-z0-9_-]{1,100}$/;
const BASE32 = '0123456789abcdefghjkmnpqrstvwxyz';

/** `evt_` + 26 base32 characters of SHA-256 over the source, the instance and the broker's id for the message. */
export function sourceEventId(sourceId: string, instanceId: string, brokerId: string): string {
  const digest = createHash('sha256').update(`source:${sourceId}\n${instanceId}\n${brokerId}`).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += BASE32[digest[i] & 31];
  return `evt_${out}`;
}

/** Herald's own event body: `{ event, payload, event_id?, timestamp?, instance_id? }`. */
export const readHeraldMessage: SourceReader = (body, sourceId, brokerId) => {
  if (!isObj(body))
    return { errors: [{ field: 'body', message: 'must be a JSON object { event, payload, … }' }] };
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message });
  const { event, payload, event_id, timestamp, instance_id } = body;
  if (typeof event !== 'string' || event === '')
    fail('event', 'is required: the event kind, such as message');
  if (!isObj(payload)) fail('payload', 'is required and must be an object');
  if (event_id != null && !(typeof event_id === 'string' && EVENT_ID.test(event_id)))
    fail('event_id', 'must be evt_ followed by 1 to 100 letters, digits, _ or -');
  const validTime =
    typeof timestamp === 'number' &&
    Number.isInteger(timestamp) &&
    timestamp >= 0 &&
    timestamp <= MAX_TIMESTAMP_MS;
  if (timestamp != null && !validTime)
    fail('timestamp', 'must be a whole number of milliseconds since the epoch');
  if (instance_id != null && !(typeof instance_id === 'string' && INSTANCE_ID.test(instance_id)))
    fail('instance_id', 'must be ins_ followed by 1 to 100 letters, digits, _ or -');
  if (errors.length) return { errors };
  const given = typeof event_id === 'string' ? event_id : null;
  return {
    event: {
      instance: typeof instance_id === 'string' ? { id: instance_id } : null,
      event: event as string,
      payload,
      timestamp: validTime ? timestamp : null,
      order_id: null,
      sessionPhone: null,
      engine: false,
      eventId: (instanceId) => given ?? sourceEventId(sourceId, instanceId, brokerId),
    },
  };
};

/** WAHA's webhook body; its `session` names the instance. */
export const readWahaMessage: SourceReader = (body, sourceId, brokerId) => {
  const read = readWahaEnvelope(body);
  if ('errors' in read) return read;
  const { engineId, ...e } = read.event;
  const session =
    isObj(body) && typeof body.session === 'string' && body.session !== '' ? body.session : null;
  return {
    event: {
      ...e,
      instance: session === null ? null : { name: session },
      order_id: engineId,
      engine: true,
      // The id WAHA's webhook route gives the same envelope: a message both posted and queued is one event.
      eventId: (instanceId) =>
        engineId
          ? engineEventId(instanceId, { envelopeId: engineId })
          : sourceEventId(sourceId, instanceId, brokerId),
    },
  };
};
