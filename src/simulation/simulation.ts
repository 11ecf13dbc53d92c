/**
 * Realistic activity of one session, in Herald's payload format: pure and seeded, so a run can be replayed; the
 * `simulate` command only sends what this produces (waha.ts turns it into what WAHA sends). The opening starts the
 * session and walks every scenario once (every kind, every media status, both message.unknown error codes), so
 * every run shows the whole catalog; after it, scenarios are drawn by realistic weights. Follow-ups (acks, a
 * call's answer, a group's changes…) come a few steps later, interleaved with other activity. The scenarios are in
 * scenarios.ts and engine-scenarios.ts, the session's state in session.ts.
 */
import type { Random } from '../domain/random.ts';
import { SCENARIOS } from './scenarios.ts';
import { type Scenario, Session, type SimulatedEvent } from './session.ts';

export type { SimulatedEvent } from './session.ts';

const TOTAL_WEIGHT = SCENARIOS.reduce((sum, [, weight]) => sum + weight, 0);

export class SessionSimulation {
  readonly #session: Session;
  #opened = false;

  constructor(random: Random, now: () => number) {
    this.#session = new Session(random, now);
  }

  /**
   * The opening: the session starts (STARTING → SCAN_QR_CODE → WORKING), then every scenario runs once, shuffled,
   * its follow-ups included, so that the whole catalog is shown at once, whatever the rate afterwards.
   */
  opening(): SimulatedEvent[] {
    this.#opened = true;
    const s = this.#session;
    const start = ['STARTING', 'SCAN_QR_CODE', 'WORKING'].map((status) => ({
      event: 'session.status',
      payload: status === 'WORKING' ? { status, phone: s.me.phone } : { status },
    }));
    const tour = s.shuffle(SCENARIOS.map(([, , run]) => run)).flatMap((run) => [...s.due(), ...run(s)]);
    return [...start, ...tour, ...s.flush()];
  }

  /** The next step of activity after the opening: one or more events, in the order the engine publishes them. */
  next(): SimulatedEvent[] {
    if (!this.#opened) return this.opening();
    return [...this.#session.due(), ...this.#weighted()(this.#session)];
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
