/**
 * A message taken from a source, read in the source's format: which instance it is for, then the events it carries
 * at that instance with their ids (one, or several for an Evolution body: a `message` and its `message.any`). Pure.
 * The id is the body's own (Herald's `event_id`, WAHA's envelope id, Evolution's derived id, each as its webhook
 * route makes it), else one derived from the source, the instance and the broker's id for the message, so that a
 * message the broker delivers again, after a crash, is the same event.
 */
import { derivedEventId } from './engine-event-id.ts';
import { type InlineFile, readEvolutionBody } from './evolution-body.ts';
import { isObj } from './payload-rules.ts';
import type { FieldError } from './types.ts';
import { engineEventId, readWahaEnvelope } from './waha-envelope.ts';

/** Where the instance comes from when the source names none: its id, or its name (engines name their session). */
export type InstanceRef = { id: string } | { name: string } | null;

/** One event of a message, as it is published at its instance. */
export interface SourceEvent {
  event: string;
  payload: unknown;
  event_id: string;
  timestamp: number | null;
  order_id: string | null;
  sessionPhone: string | null;
  status_at: number | null;
  /** Its payload shows the message's inline file (SourceEvents.inline) once that is stored. */
  inline_media: boolean;
}

/** A message's events at one instance, in order, with the file its body carried inline (Evolution's base64). */
export interface SourceEvents {
  events: SourceEvent[];
  inline: InlineFile | null;
}

/** A message read: the instance its body names, and its events at whichever instance it goes to. */
export interface SourceMessage {
  instance: InstanceRef;
  /** The events at `instanceId`, or the body's errors where they show only then (Evolution's whole reading). */
  at(instanceId: string): SourceEvents | { errors: FieldError[] };
}

export type SourceReader = (
  body: unknown,
  sourceId: string,
  brokerId: string,
) => { message: SourceMessage } | { errors: FieldError[] };

/** A message of one event. */
const single = (
  instance: InstanceRef,
  event: (instanceId: string) => SourceEvent,
): { message: SourceMessage } => ({
  message: { instance, at: (instanceId) => ({ events: [event(instanceId)], inline: null }) },
});

const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,100}$/;
const INSTANCE_ID = /^ins_[A-Za-z0-9_-]{1,100}$/;
/** The event_id of a message without one: derived from the instance, the source and the broker's id for it. */
export const sourceEventId = (sourceId: string, instanceId: string, brokerId: string): string =>
  derivedEventId(instanceId, `source:${sourceId}\n${brokerId}`);

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
  return single(typeof instance_id === 'string' ? { id: instance_id } : null, (instanceId) => ({
    event: event as string,
    payload,
    event_id: given ?? sourceEventId(sourceId, instanceId, brokerId),
    timestamp: validTime ? timestamp : null,
    order_id: null,
    sessionPhone: null,
    status_at: null,
    inline_media: false,
  }));
};

/** WAHA's webhook body; its `session` names the instance. */
export const readWahaMessage: SourceReader = (body, sourceId, brokerId) => {
  const read = readWahaEnvelope(body);
  if ('errors' in read) return read;
  const { engineId, ...e } = read.event;
  const session =
    isObj(body) && typeof body.session === 'string' && body.session !== '' ? body.session : null;
  return single(session === null ? null : { name: session }, (instanceId) => ({
    ...e,
    order_id: engineId,
    // The id WAHA's webhook route gives the same envelope: a message both posted and queued is one event.
    event_id: engineId
      ? engineEventId(instanceId, { envelopeId: engineId })
      : sourceEventId(sourceId, instanceId, brokerId),
    status_at: null,
    inline_media: false,
  }));
};

/**
 * Evolution API's event body, as it posts it to a webhook and publishes it to RabbitMQ or NATS (the same object, but
 * for the webhook's `destination`); its `instance` names the instance. Read as its webhook route reads it: the same
 * events, ids and inline file.
 */
export const readEvolutionMessage: SourceReader = (body) => {
  const name =
    isObj(body) && typeof body.instance === 'string' && body.instance !== '' ? body.instance : null;
  return {
    message: {
      instance: name === null ? null : { name },
      at(instanceId) {
        const read = readEvolutionBody(instanceId, body);
        if ('errors' in read) return read;
        return {
          inline: read.read.inline,
          events: read.read.events.map((e) => ({ ...e, order_id: null, sessionPhone: null })),
        };
      },
    },
  };
};
