/**
 * Ingest by turn, for both dialects: the ingests of one event-loop turn (same-turn.ts) stored in one transaction.
 * One that fails for its own reason fails alone. A repeated event_id of another instance is found only while
 * writing, so then the turn is rolled back and each ingest made again in a transaction of its own, in the order
 * they came, as one transaction would have taken them: the first to use an event_id keeps it. (No savepoint per call
 * instead: SQLite copies every page a savepoint changes into a journal, which every turn would pay for a failure
 * that almost never comes.)
 */

import type { EventDraft } from '../../domain/types.ts';
import type { Events } from '../ports.ts';
import type { HandOffRoom, IngestResult, Router } from '../records.ts';
import { SameTurn, type Settled } from '../same-turn.ts';

/** One ingest call, as a turn gathers them. */
export interface IngestArrival {
  instanceId: string;
  events: EventDraft[];
  router: Router;
  now: number;
  handOff?: HandOffRoom;
}

export type Commit = (arrivals: IngestArrival[]) => Promise<Settled<IngestResult[]>[]>;

/** `commit` stores arrivals in one transaction; `oneConflicts` tells the failure that one of them alone caused. */
export function ingestByTurn(commit: Commit, oneConflicts: (err: unknown) => boolean): Events['ingest'] {
  const turn = new SameTurn<IngestArrival, IngestResult[]>(async (arrivals) => {
    try {
      return await commit(arrivals);
    } catch (err) {
      if (arrivals.length === 1 || !oneConflicts(err)) throw err;
      const settled: Settled<IngestResult[]>[] = [];
      for (const a of arrivals) {
        try {
          settled.push(...(await commit([a])));
        } catch (error) {
          settled.push({ error });
        }
      }
      return settled;
    }
  });
  return (instanceId, events, router, now, handOff) =>
    turn.call({ instanceId, events, router, now, handOff });
}
