/**
 * Which session.status an instance shows. An engine sends every event at once, each on its own connection, so the
 * posts of a session's changes (STARTING, SCAN_QR_CODE, WORKING) commit in any order: the instance follows the
 * newest by the event's own `timestamp`, not the last to commit. Two at the same millisecond are told apart by the
 * greater name the publisher gave them (WAHA's envelope id, else the event_id: EventDraft.order_id), so that every
 * store and every process settles on the same one. Pure.
 */

/** Where an instance's status came from: its session.status event's timestamp (ms) and its order_id. */
export interface StatusMark {
  at: number;
  /** The event's order_id (stored as instances.status_event_id). */
  event_id: string;
}

/**
 * Whether a session.status marked `next` is newer than the one the instance shows (`shown`; null when none has set
 * it yet, e.g. a new instance). The stores write this same order as a condition of their UPDATE (store/sql-fragments.ts,
 * NEWER_STATUS), so that two transactions at once cannot both win.
 */
export function isNewerStatus(next: StatusMark, shown: StatusMark | null): boolean {
  if (shown === null) return true;
  if (next.at !== shown.at) return next.at > shown.at;
  return next.event_id > shown.event_id;
}
