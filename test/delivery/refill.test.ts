/** When a finishing attempt makes the dispatcher claim its webhook again (src/delivery/refill.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Refill } from '../../src/delivery/refill.ts';
import type { ClaimedDelivery } from '../../src/store/store.ts';

const claimsOf = (webhookId: string, n: number) =>
  Array.from({ length: n }, () => ({ webhook_id: webhookId }) as ClaimedDelivery);

test('a webhook is claimed again once half of what it may claim ahead of its cap is gone', () => {
  const refill = new Refill();
  assert.equal(refill.needed('whk_a', 64, 128), false, 'up to 128 ahead: refill below 64');
  assert.equal(refill.needed('whk_a', 63, 128), true);
  assert.equal(refill.needed('whk_a', 63, 100), false, 'a slower receiver: refill below 50');
  assert.equal(refill.needed('whk_a', 49, 100), true);
});

test('after a claim that got less than it asked for, only new work makes the webhook claimed again', () => {
  const refill = new Refill();
  refill.begin();
  refill.ask('whk_a', 10);
  refill.ask('whk_b', 10);
  refill.ask('whk_c', 0);
  refill.got([...claimsOf('whk_a', 10), ...claimsOf('whk_b', 3)], false);
  assert.equal(refill.needed('whk_a', 0, 64), true, 'got all it asked for: more may be due');
  assert.equal(refill.needed('whk_b', 0, 64), false, 'nothing more of it was due');
  assert.equal(refill.needed('whk_c', 0, 64), true, 'not asked: nothing learnt');
  refill.newWork();
  assert.equal(refill.needed('whk_b', 0, 64), true);
});

test('a claim that took all it was allowed marks no webhook drained: it may have stopped short of their room', () => {
  const refill = new Refill();
  refill.begin();
  refill.ask('whk_a', 300);
  refill.got(claimsOf('whk_a', 256), true);
  assert.equal(refill.needed('whk_a', 0, 64), true);
  refill.begin();
  refill.ask('whk_a', 300);
  refill.got(claimsOf('whk_a', 100), false);
  assert.equal(refill.needed('whk_a', 0, 64), false, 'a claim short of its limit: nothing more was due');
});

test('without claims ahead, a webhook is claimed again when it holds none', () => {
  const refill = new Refill();
  assert.equal(refill.needed('whk_a', 1, 0), false);
  assert.equal(refill.needed('whk_a', 0, 0), true);
});
