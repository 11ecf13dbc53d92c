/** How far ahead of its cap a webhook is claimed: as far as its receiver's pace allows (src/delivery/receiver-pace.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReceiverPace } from '../../src/delivery/receiver-pace.ts';

const UNTRIED = 64;

/** `n` answers for the webhook, evenly spread over [from, to). */
function answers(p: ReceiverPace, n: number, from: number, to: number) {
  for (let i = 0; i < n; i++) p.ended(from + Math.floor(((to - from) * i) / n), false);
}

test('a webhook whose pace is not known runs the untried amount ahead: idle, or busy for under the window with no answer yet', () => {
  const a = new ReceiverPace(1000, UNTRIED);
  assert.equal(a.ahead(0, 5000), UNTRIED, 'a fresh burst');
  a.busy(5000);
  assert.equal(a.ahead(3, 6000), UNTRIED, 'busy for 1 s, no answer yet');
  assert.equal(a.ahead(3, 6001), 0, 'busy for longer than the window, no answer');
  a.ended(6500, false);
  assert.equal(a.ahead(3, 6600), 1, 'one answer within the last half window: one ahead');
  assert.equal(a.ahead(3, 7600), 0, 'no answer for longer than the window');
  a.idle();
  assert.equal(a.ahead(0, 9000), UNTRIED, 'idle again');
});

test('ahead of the cap by as many attempts as the receiver answered in the last half window: a fast one far, a slow one little', () => {
  const fast = new ReceiverPace(1000, UNTRIED);
  const slow = new ReceiverPace(1000, UNTRIED);
  answers(fast, 10_000, 0, 500);
  answers(slow, 25, 0, 500);
  assert.equal(fast.ahead(64, 500), 10_000);
  assert.equal(slow.ahead(64, 500), 25);
  // All attempts ended while the next claim is made: the pace is kept, not relearnt from one cap ahead.
  fast.idle();
  assert.equal(fast.ahead(0, 500), 10_000);
  // A quarter window later at the same pace, the count still covers half a window's answers.
  answers(slow, 12, 500, 750);
  assert.equal(slow.ahead(64, 750), 24);
  // The receiver stops answering at 750: the count runs down, and is gone a full window after it.
  const later = slow.ahead(64, 1100);
  assert.ok(later > 0 && later < 25, `${later} ahead at 1100`);
  assert.equal(slow.ahead(64, 1500), 0);
  assert.equal(slow.forgettable(1500), true, 'nothing left to remember');
  assert.equal(fast.forgettable(600), false);
});

test('a receiver slowing down is handed less within half a window', () => {
  const a = new ReceiverPace(1000, UNTRIED);
  answers(a, 1000, 0, 500);
  answers(a, 10, 500, 1000);
  assert.equal(a.ahead(64, 1000), 10);
});

test('a webhook whose last attempt timed out does not run ahead, in flight or not, until one is answered', () => {
  const a = new ReceiverPace(1000, UNTRIED);
  a.ended(5000, false);
  a.ended(5100, true);
  a.idle();
  assert.equal(a.ahead(0, 5200), 0, 'idle after a timeout');
  assert.equal(a.ahead(2, 5200), 0, 'in flight after a timeout');
  a.ended(5300, false);
  assert.equal(a.ahead(2, 5400), 2, 'answered again: both answers count');
  assert.equal(new ReceiverPace(1000, UNTRIED).ahead(0, 5400), UNTRIED, 'other webhooks are their own');
});
