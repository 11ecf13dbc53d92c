/**
 * Realistic activity of one session, as its engine would publish it (SPEC §7): pure and seeded, so a run can be
 * replayed; the `simulate` command only sends what this produces. The session starts STARTING → SCAN_QR_CODE →
 * WORKING; then conversations follow. The first round walks every scenario once (every kind, every media status,
 * both message.unknown error codes), so even a short run shows the whole catalog; after it, scenarios are drawn by
 * realistic weights. Follow-ups (acks, a call's answer, a group's changes…) come a few steps later, interleaved
 * with other activity. The scenarios are in simulation/scenarios.ts, the session's state in simulation/session.ts.
 */
import type { Random } from './random.ts';
import { SCENARIOS, type Scenario } from './simulation/scenarios.ts';
import { Session, type SimulatedEvent } from './simulation/session.ts';

export type { SimulatedEvent } from './simulation/session.ts';

const TOTAL_WEIGHT = SCENARIOS.reduce((sum, [, weight]) => sum + weight, 0);

export class SessionSimulation {
  readonly #session: Session;
  readonly #tour: Scenario[];
  #started = false;

  constructor(random: Random, now: () => number) {
    this.#session = new Session(random, now);
    this.#tour = this.#session.shuffle(SCENARIOS.map(([, , run]) => run));
  }

  /** The next step of activity: one or more events, in the order the engine would publish them. */
  next(): SimulatedEvent[] {
    const s = this.#session;
    if (!this.#started) {
      this.#started = true;
      return ['STARTING', 'SCAN_QR_CODE', 'WORKING'].map((status) => ({
        event: 'session.status',
        payload: status === 'WORKING' ? { status, phone: s.me.phone } : { status },
      }));
    }
    const due = s.due();
    const scenario = this.#tour.shift() ?? this.#weighted();
    return [...due, ...scenario(s)];
  }

  #weighted(): Scenario {
    let r = this.#session.random() * TOTAL_WEIGHT;
    for (const [, weight, run] of SCENARIOS) {
      r -= weight;
      if (r < 0) return run;
    }
    return SCENARIOS[0][2];
  }
}
