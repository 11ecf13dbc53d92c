/** When a finishing attempt makes the dispatcher claim its webhook again (src/delivery/refill.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Refill } from '../../src/delivery/refill.ts';
import type { ClaimedDelivery } from '../../src/store/store.ts';

const claimsOf = (webhookId: string, n: number) =>
  Array.from({ length: n }, () => ({ webhook_id: webhookId }) as ClaimedDelivery);

test('a webhook is claimed again once half of its held claims are gone', () => {
  const refill = new Refill(64, 3); // up to 128 held beyond the cap: refill below 64
  assert.equal(refill.needed('whk_a', 64), false);
  assert.equal(refill.needed('whk_a', 63), true);
});

test('after a claim that got less than it asked for, only new work makes the webhook claimed again', () => {
  const refill = new Refill(64, 2);
  refill.begin();
  refill.ask('whk_a', 10);
  refill.ask('whk_b', 10);
  refill.ask('whk_c', 0);
  refill.got([...claimsOf('whk_a', 10), ...claimsOf('whk_b', 3)]);
  assert.equal(refill.needed('whk_a', 0), true, 'got all it asked for: more may be due');
  assert.equal(refill.needed('whk_b', 0), false, 'nothing more of it was due');
  assert.equal(refill.needed('whk_c', 0), true, 'not asked: nothing learnt');
  refill.newWork();
  assert.equal(refill.needed('whk_b', 0), true);
});

test('without claims ahead, a webhook is claimed again when it holds none', () => {
  const refill = new Refill(64, 1);
  assert.equal(refill.needed('whk_a', 1), false);
  assert.equal(refill.needed('whk_a', 0), true);
});
