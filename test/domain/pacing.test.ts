/** A rate limit as start slots, on an injected clock (src/domain/pacing.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { takeSlots } from '../../src/domain/pacing.ts';

test('5 per second: slots 200 ms apart, only those within the horizon, the next free one remembered', () => {
  const first = takeSlots(5, 0, 10_000, 100, 1000);
  assert.deepEqual(first.slots, [10_000, 10_200, 10_400, 10_600, 10_800]);
  assert.equal(first.nextAt, 11_000);
  // A claim 100 ms later finds no slot free within its horizon beyond the ones taken.
  const second = takeSlots(5, first.nextAt, 10_100, 100, 1000);
  assert.deepEqual(second.slots, [11_000]);
  assert.equal(second.nextAt, 11_200);
});

test('15 deliveries at 5 per second, claimed as the horizon moves: spread over about 3 s', () => {
  let nextAt = 0;
  const starts: number[] = [];
  for (let now = 0; starts.length < 15; now += 250) {
    const taken = takeSlots(5, nextAt, now, 15 - starts.length, 1000);
    starts.push(...taken.slots);
    nextAt = taken.nextAt;
  }
  assert.equal(starts[14] - starts[0], 2800);
  for (let i = 1; i < 15; i++) assert.equal(starts[i] - starts[i - 1], 200);
});

test('an idle webhook starts at once: a slot long past is not owed', () => {
  assert.deepEqual(takeSlots(2, 1000, 60_000, 1, 1000).slots, [60_000]);
});

test('fewer wanted than fit: only those are taken; none wanted: nothing changes', () => {
  assert.deepEqual(takeSlots(100, 0, 0, 3, 1000), { slots: [0, 10, 20], nextAt: 30 });
  assert.deepEqual(takeSlots(100, 500, 0, 0, 1000), { slots: [], nextAt: 500 });
});

test('fractional intervals round up to whole milliseconds, never earlier than the limit allows', () => {
  const { slots } = takeSlots(3, 0, 0, 3, 1000);
  assert.deepEqual(slots, [0, 334, 667]);
});
