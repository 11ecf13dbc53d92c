/**
 * A sender in process, for tests that drive a dispatcher directly: the real lanes (src/delivery/lanes.ts) admit
 * each attempt on the test's clock, and `attempt` makes it. Waiting claims whose window closed come back unstarted,
 * as in the delivery thread.
 */
import { Lanes } from '../../src/delivery/lanes.ts';
import type { Handed, SenderPort, Sent } from '../../src/delivery/thread-feed.ts';
import type { AttemptOutcome } from '../../src/domain/types.ts';
import type { ClaimedDelivery } from '../../src/store/records.ts';

export class LaneSender implements SenderPort {
  readonly #lanes: Lanes<ClaimedDelivery>;
  readonly #clock: () => number;
  readonly #timer: NodeJS.Timeout;
  #handler: (sent: Sent[]) => void = () => {};

  constructor(
    attempt: (claim: ClaimedDelivery) => Promise<AttemptOutcome>,
    o: { clock?: () => number; maxRunning?: number } = {},
  ) {
    this.#clock = o.clock ?? Date.now;
    this.#lanes = new Lanes(o.maxRunning ?? 512, (claim) => {
      attempt(claim).then((outcome) => {
        this.#handler([{ claim, outcome }]);
        this.#unstarted(this.#lanes.finished(claim.webhook_id, this.#clock()));
      });
    });
    // The thread's timer, on the test's clock: windows that closed are found even when nothing ends.
    this.#timer = setInterval(() => this.#unstarted(this.#lanes.tick(this.#clock())), 20);
  }

  onResults(handler: (sent: Sent[]) => void): void {
    this.#handler = handler;
  }

  submit(handed: readonly Handed[]): void {
    this.#unstarted(this.#lanes.submit(handed, this.#clock()));
  }

  drop(): void {
    this.#unstarted(this.#lanes.drain());
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #unstarted(claims: ClaimedDelivery[]): void {
    if (claims.length > 0) this.#handler(claims.map((claim) => ({ claim, outcome: null })));
  }
}

/** One attempt at a time through a real sender, as a promise of its outcome (null: it never started). */
export function attempter(sender: SenderPort): (claim: ClaimedDelivery) => Promise<AttemptOutcome | null> {
  const waiting = new Map<string, (outcome: AttemptOutcome | null) => void>();
  sender.onResults((sent) => {
    for (const { claim, outcome } of sent) {
      waiting.get(claim.delivery_id)?.(outcome);
      waiting.delete(claim.delivery_id);
    }
  });
  return (claim) =>
    new Promise((resolve) => {
      waiting.set(claim.delivery_id, resolve);
      sender.submit([
        {
          webhookId: claim.webhook_id,
          item: claim,
          limit: 1,
          startAt: 0,
          startBy: Date.now() + 1000,
          gapMs: 0,
        },
      ]);
    });
}
