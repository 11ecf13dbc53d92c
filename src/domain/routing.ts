/** Which webhooks receive an event (SPEC §7 "Routing"). Pure: the caller passes the instance's webhooks. */
import { concernsStatus } from './events.ts';
import type { EventDraft, Webhook } from './types.ts';

/**
 * The webhooks an event goes to: enabled ones whose events contain its kind or '*'; an event that
 * concernsStatus() only to webhooks with ignore_status false. Order of `webhooks` is kept.
 */
export function route(event: Pick<EventDraft, 'event' | 'payload'>, webhooks: readonly Webhook[]): Webhook[] {
  const aboutStatus = concernsStatus(event.payload);
  return webhooks.filter(
    (w) =>
      // Disabled webhooks get nothing: events that occur meanwhile are not queued for them (SPEC §6).
      w.enabled &&
      (w.events.includes(event.event) || w.events.includes('*')) &&
      !(aboutStatus && w.ignore_status),
  );
}
