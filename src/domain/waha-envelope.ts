/**
 * WAHA's webhook body, read as the engine sends it: `{ id, timestamp, session, engine, event, payload, me?,
 * metadata?, environment? }`. Pure. The envelope's id names the event for the engine's retries (engineEventId);
 * its timestamp (ms) is the event's; `me.id` is the session's own phone. `session`, `engine`, `environment` and
 * `metadata` describe the engine, not the event, and are not delivered.
 */
import { derivedEventId } from './engine-event-id.ts';
import { phoneOf } from './jid.ts';
import { isObj } from './payload-rules.ts';
import type { FieldError } from './types.ts';

export interface EngineEvent {
  /** The envelope's id (without `evt_`); null when the engine sent none (older WAHA versions). */
  engineId: string | null;
  event: string;
  timestamp: number | null;
  payload: unknown;
  /** The session's own phone number (digits), from `me.id`, or null. */
  sessionPhone: string | null;
}

/** The last time a JavaScript Date can hold, in ms. */
const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;
const ID = /^[A-Za-z0-9_-]{1,100}$/;

export function readWahaEnvelope(body: unknown): { event: EngineEvent } | { errors: FieldError[] } {
  if (!isObj(body))
    return { errors: [{ field: 'body', message: "must be a JSON object (WAHA's webhook body)" }] };
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message });
  const { id, timestamp, event, me } = body;
  if (typeof event !== 'string' || event === '')
    fail('event', 'is required: the event kind, such as message');
  if (!('payload' in body)) fail('payload', 'is required');
  let engineId: string | null = null;
  if (id != null) {
    const bare = typeof id === 'string' && id.startsWith('evt_') ? id.slice(4) : id;
    if (typeof bare === 'string' && ID.test(bare)) engineId = bare;
    else fail('id', 'must be 1 to 100 letters, digits, _ or -, optionally after evt_');
  }
  const validTime = typeof timestamp === 'number' && timestamp >= 0 && timestamp <= MAX_TIMESTAMP_MS;
  if (timestamp != null && !validTime) fail('timestamp', 'must be a time in milliseconds since the epoch');
  if (me != null && !(isObj(me) && (me.id == null || typeof me.id === 'string'))) {
    fail('me', 'must be an object whose id is a string');
  }
  if (errors.length) return { errors };
  return {
    event: {
      engineId,
      event: event as string,
      timestamp: validTime ? Math.round(timestamp) : null,
      payload: body.payload,
      sessionPhone: isObj(me) ? phoneOf(me.id) : null,
    },
  };
}

/**
 * The event_id of a WAHA event at one instance (engine-event-id.ts), named by its envelope id, else by its
 * `X-Webhook-Request-Id`. WAHA gives every webhook of a session the same envelope id.
 */
export function engineEventId(
  instanceId: string,
  source: { envelopeId: string } | { requestId: string },
): string {
  const name = 'envelopeId' in source ? `id:${source.envelopeId}` : `request:${source.requestId}`;
  return derivedEventId(instanceId, name);
}
