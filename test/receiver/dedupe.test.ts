import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryDedupe } from '../../packages/receiver/src/dedupe.ts';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('MemoryDedupe', () => {
  it('reports the first sighting only', () => {
    const d = new MemoryDedupe();
    assert.equal(d.firstSeen('evt_a'), true);
    assert.equal(d.firstSeen('evt_a'), false);
    assert.equal(d.firstSeen('evt_a'), false);
    assert.equal(d.firstSeen('evt_b'), true);
  });

  it('forgets ids after the TTL', () => {
    const c = clock();
    const d = new MemoryDedupe({ ttlMs: 1000, now: c.now });
    assert.equal(d.firstSeen('evt_a'), true);
    c.advance(999);
    assert.equal(d.firstSeen('evt_a'), false);
    c.advance(1);
    assert.equal(d.firstSeen('evt_a'), true);
    assert.equal(d.firstSeen('evt_a'), false);
  });

  it('does not extend the TTL on repeated sightings', () => {
    const c = clock();
    const d = new MemoryDedupe({ ttlMs: 1000, now: c.now });
    d.firstSeen('evt_a');
    c.advance(600);
    assert.equal(d.firstSeen('evt_a'), false);
    c.advance(600);
    assert.equal(d.firstSeen('evt_a'), true);
  });

  it('evicts the least recently seen id beyond max', () => {
    const d = new MemoryDedupe({ max: 2 });
    d.firstSeen('evt_a');
    d.firstSeen('evt_b');
    d.firstSeen('evt_c'); // evicts a
    assert.equal(d.firstSeen('evt_c'), false);
    assert.equal(d.firstSeen('evt_b'), false);
    assert.equal(d.firstSeen('evt_a'), true); // was evicted; re-recording it evicts c (b was just used)
    assert.equal(d.firstSeen('evt_b'), false);
    assert.equal(d.firstSeen('evt_c'), true);
  });

  it('counts a repeat sighting as use for LRU order', () => {
    const d = new MemoryDedupe({ max: 2 });
    d.firstSeen('evt_a');
    d.firstSeen('evt_b');
    assert.equal(d.firstSeen('evt_a'), false); // a is now most recent
    d.firstSeen('evt_c'); // evicts b
    assert.equal(d.firstSeen('evt_a'), false);
    assert.equal(d.firstSeen('evt_b'), true);
  });

  it('rejects invalid options', () => {
    assert.throws(() => new MemoryDedupe({ max: 0 }), RangeError);
    assert.throws(() => new MemoryDedupe({ max: 1.5 }), RangeError);
    assert.throws(() => new MemoryDedupe({ ttlMs: 0 }), RangeError);
  });
});
