import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TokenBuckets } from '../../src/api/token-bucket.ts';

describe('TokenBuckets', () => {
  it('grants a full burst, then says how long until the next token', () => {
    const b = new TokenBuckets(10, 20);
    for (let i = 0; i < 20; i++) assert.equal(b.take('k', 1000), 0, `request ${i + 1}`);
    assert.equal(b.take('k', 1000), 100);
    assert.equal(b.take('k', 1050), 50);
    assert.equal(b.take('k', 1100), 0);
    assert.equal(b.take('k', 1100), 100);
  });

  it('refills at the rate, never above the capacity', () => {
    const b = new TokenBuckets(2, 4);
    for (let i = 0; i < 4; i++) b.take('k', 0);
    // An hour idle refills to 4, not to 7200.
    const granted = Array.from({ length: 6 }, () => b.take('k', 3_600_000)).filter((w) => w === 0).length;
    assert.equal(granted, 4);
  });

  it('keeps keys apart', () => {
    const b = new TokenBuckets(1, 1);
    assert.equal(b.take('a', 0), 0);
    assert.equal(b.take('a', 0), 1000);
    assert.equal(b.take('b', 0), 0);
  });

  it('mints nothing when the clock steps back', () => {
    const b = new TokenBuckets(1, 1);
    assert.equal(b.take('k', 10_000), 0);
    assert.equal(b.take('k', 5_000) > 0, true);
    assert.equal(b.take('k', 10_999) > 0, true);
    assert.equal(b.take('k', 11_000), 0);
  });

  it('a slow rate waits whole periods', () => {
    const b = new TokenBuckets(0.5, 1);
    assert.equal(b.take('k', 0), 0);
    assert.equal(b.take('k', 0), 2000);
  });

  it('refuses a rate or capacity that would grant nothing', () => {
    assert.throws(() => new TokenBuckets(0, 1));
    assert.throws(() => new TokenBuckets(1, 0.5));
  });
});
