/**
 * The hand-off at ingest, on the delivery side: the store's events port as the API of a process that also delivers
 * sees it. Each ingest asks the dispatcher for its room (store/records.ts, HandOffRoom) and gives it what the store
 * leased within that room right after the commit, before the flush the 202 waits for, so that the attempts start
 * while the disk catches up. The API only ingests; it knows of no dispatcher.
 */
import type { Events } from '../store/ports.ts';
import type { ClaimedDelivery, HandOffRoom } from '../store/records.ts';

/** What of a dispatcher the hand-off uses (delivery/dispatcher.ts). */
export interface HandOffTaker {
  /** What it can take of fresh deliveries now; undefined when nothing. */
  handOffRoom(now: number): HandOffRoom | undefined;
  /** What ingest leased within that room, once committed. */
  takeHandOff(claims: ClaimedDelivery[]): void;
}

/** `events`, whose ingests hand what they lease to `taker`. */
export function handingOff(events: Events, taker: HandOffTaker): Events {
  return {
    ingest(instanceId, drafts, router, now) {
      const room = taker.handOffRoom(now);
      return events.ingest(
        instanceId,
        drafts,
        router,
        now,
        room && { ...room, committed: (claims) => taker.takeHandOff(claims) },
      );
    },
  };
}
