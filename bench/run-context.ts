/** What a workload is given and what it answers: the run's settings and shared receiver in, named figures out. */
import type { System } from './loader.ts';
import type { Receiver } from './receiver.ts';

export interface RunContext {
  databaseUrl: string | null;
  /** Overrides the workload's event count (W4: deliveries). */
  events?: number;
  /** Overrides the steady publishing rate of W2 and W3. */
  rate?: number;
  /** W2's seconds at the rate before the measured events, on every system (default 1). */
  warmup?: number;
  /** W1 and W5: events (and raw requests) sent first, not measured (default none: both start cold). */
  bulkWarmup?: number;
  /** The fast receiver, one process shared by all runs. */
  receiver: Receiver;
  label: string;
  profileDir?: string;
  /** The systems that W2 and the engine stream run on, in this order (`--systems`). */
  systems: System[];
}

export type Unit = 'rate' | 'ratio' | 'ms' | 'bytes' | 'count';
export interface Figure {
  name: string;
  value: number;
  unit: Unit;
}

export interface Workload {
  id: string;
  title: (ctx: Pick<RunContext, 'events' | 'rate' | 'warmup' | 'bulkWarmup'>) => string;
  run: (ctx: RunContext) => Promise<Figure[]>;
}
