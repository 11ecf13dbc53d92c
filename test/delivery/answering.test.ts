/** Which receivers are answering: what decides whether a webhook is claimed and handed over ahead of its cap. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Answering } from '../../src/delivery/answering.ts';

test('a webhook with nothing in flight may run ahead; one in flight only if it got busy or had an answer within the window', () => {
  const a = new Answering(1000);
  assert.equal(a.lately('whk_a', 0, 5000), true, 'a fresh burst');
  a.busy('whk_a', 5000);
  assert.equal(a.lately('whk_a', 3, 6000), true, 'busy for 1 s, no answer yet');
  assert.equal(a.lately('whk_a', 3, 6001), false, 'busy for longer than the window, no answer');
  a.ended('whk_a', 6500, false);
  assert.equal(a.lately('whk_a', 3, 7500), true, 'answered 1 s ago');
  assert.equal(a.lately('whk_a', 3, 7501), false, 'no answer for longer than the window');
  a.idle('whk_a');
  assert.equal(a.lately('whk_a', 0, 9000), true, 'idle again');
});

test('a webhook whose last attempt timed out does not run ahead, in flight or not, until one is answered', () => {
  const a = new Answering(1000);
  a.ended('whk_a', 5000, false);
  a.ended('whk_a', 5100, true);
  a.idle('whk_a');
  assert.equal(a.lately('whk_a', 0, 5200), false, 'idle after a timeout');
  assert.equal(a.lately('whk_a', 2, 5200), false, 'in flight after a timeout');
  a.ended('whk_a', 5300, false);
  assert.equal(a.lately('whk_a', 2, 5400), true, 'answered again');
  assert.equal(a.lately('whk_b', 0, 5400), true, 'other webhooks are their own');
});
