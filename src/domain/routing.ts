/** Which webhooks receive an event. Pure: the caller passes the instance's webhooks. */
import { OPERATIONAL_KINDS } from './event-kinds.ts';
import { concernsStatus } from './events.ts';
import { matches } from './filter.ts';
import type { EventDraft, Webhook } from './types.ts';

/**
 * The webhooks an event goes to: enabled ones whose events contain its kind or '*' (which Herald's operational
 * events are not part of: they go to those that name them); an event that concerns a
 * status/story only to webhooks with ignore_status false; then each webhook's filter, judged on the delivery body.
 * Order of `webhooks` is kept.
 */
export function route(
  event: Pick<EventDraft, 'event' | 'payload'> &
    Partial<Pick<EventDraft, 'event_id' | 'instance_id' | 'timestamp'>>,
  webhooks: readonly Webhook[],
): Webhook[] {
  const aboutStatus = concernsStatus(event.payload);
  const body = {
    event_id: event.event_id,
    event: event.event,
    instance_id: event.instance_id,
    timestamp: event.timestamp,
    payload: event.payload,
  };
  return webhooks.filter(
    (w) =>
      // Disabled webhooks get nothing: events that occur meanwhile are not queued for them.
      w.enabled &&
      (w.events.includes(event.event) ||
        (w.events.includes('*') && !OPERATIONAL_KINDS.includes(event.event))) &&
      !(aboutStatus && w.ignore_status) &&
      (!w.filter || matches(w.filter, body)),
  );
}
