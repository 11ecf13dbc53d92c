/** What a workload is given and what it answers: the run's settings and shared receiver in, named figures out. */
import type { System } from './loader.ts';
import type { Receiver } from './receiver.ts';

export interface RunContext {
  databaseUrl: string | null;
  /** Overrides the workload's event count (W4: deliveries). */
  events?: number;
  /** Overrides the steady publishing rate of W2 and W3. */
  rate?: number;
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
  title: (ctx: Pick<RunContext, 'events' | 'rate'>) => string;
  run: (ctx: RunContext) => Promise<Figure[]>;
}
