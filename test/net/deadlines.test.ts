/** The deadline wheel of the sender: one timer for every attempt's timeout, released when an attempt ends. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Deadlines } from '../../src/net/deadlines.ts';

/** Something a deadline ends, which tells when it was ended. */
function target() {
  let expire = () => {};
  const expired = new Promise<number>((resolve) => {
    expire = () => resolve(performance.now());
  });
  return { expire: () => expire(), expired };
}

test('a deadline expires its target once the timeout has passed, never before', async () => {
  const deadlines = new Deadlines(200);
  const started = performance.now();
  const t = target();
  const d = deadlines.start(t);
  assert.equal(d.expired(), false);
  const elapsed = (await t.expired) - started;
  assert.ok(elapsed >= 200, `expired after ${elapsed} ms`);
  assert.equal(d.expired(), true);
  deadlines.close();
});

test('a released deadline never expires its target, while the others still do', async () => {
  const deadlines = new Deadlines(100);
  let releasedExpired = false;
  const released = deadlines.start({ expire: () => (releasedExpired = true) });
  const kept = target();
  deadlines.start(kept);
  released.release();
  await kept.expired;
  // Both were in the same slot: had the released one been kept, it would have expired in the same tick.
  assert.equal(releasedExpired, false);
  deadlines.close();
});
