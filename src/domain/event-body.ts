import type { EventDraft } from './types.ts';

/**
 * The delivery request body, serialised once when the event is accepted: the size limit is checked
 * on these bytes, they are stored, and every attempt to every webhook sends them unchanged.
 */
export function eventBody(e: Omit<EventDraft, 'body'>): string {
  return JSON.stringify({
    event_id: e.event_id,
    event: e.event,
    instance_id: e.instance_id,
    timestamp: e.timestamp,
    payload: e.payload,
  });
}

/** The body with its payload's media object replaced: how engine media, once settled, reaches every delivery. */
export function withSettledMedia(body: string, media: Record<string, unknown>): string {
  const parsed = JSON.parse(body);
  parsed.payload = { ...parsed.payload, media };
  return JSON.stringify(parsed);
}

/** The event kind, read off the start of the body (eventBody writes event_id, then event) without parsing it all. */
export function eventKindOf(body: string): string {
  const head = /^\{"event_id":"[^"]*","event":"([^"\\]*)"/.exec(body);
  if (head) return head[1];
  try {
    return String(JSON.parse(body).event ?? '');
  } catch {
    return '';
  }
}
