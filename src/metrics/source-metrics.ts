/**
 * The sources' metrics: messages by what came of them, and whether each source's consumer is consuming. A source's
 * series go with it when it is deleted; source ids are the admin's, so their number is bounded.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export type SourceResult = 'ingested' | 'duplicate' | 'parked' | 'retried';
export const SOURCE_RESULTS: readonly SourceResult[] = ['ingested', 'duplicate', 'parked', 'retried'];

export interface SourceObserver {
  sourceMessages(sourceId: string, result: SourceResult, n: number): void;
  sourceUp(sourceId: string, up: boolean): void;
  sourceGone(sourceId: string): void;
}

export function sourceMetrics(registry: Registry): SourceObserver {
  const registers = [registry];
  const messages = new Counter({
    name: 'herald_source_messages_total',
    help: 'Messages taken from a source, by result: ingested, duplicate (stored before), parked (never ingestible), retried (Herald’s store failed; not acknowledged)',
    labelNames: ['source_id', 'result'],
    registers,
  });
  const up = new Gauge({
    name: 'herald_source_up',
    help: 'Whether this process consumes the source now (1) or is connecting or reconnecting to its broker (0)',
    labelNames: ['source_id'],
    registers,
  });
  return {
    sourceMessages(source_id, result, n) {
      if (n > 0) messages.inc({ source_id, result }, n);
    },
    sourceUp(source_id, isUp) {
      if (!isUp) for (const result of SOURCE_RESULTS) messages.inc({ source_id, result }, 0);
      up.set({ source_id }, isUp ? 1 : 0);
    },
    sourceGone(source_id) {
      up.remove({ source_id });
      for (const result of SOURCE_RESULTS) messages.remove({ source_id, result });
    },
  };
}
