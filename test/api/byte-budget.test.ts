/** The shared byte budget large bodies draw on: first come first served, never refused for size alone. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteBudget } from '../../src/api/byte-budget.ts';

/** Whether the promise has settled by the time already-queued callbacks have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

test('within the budget at once; past it, a request waits until enough is given back', async () => {
  const b = new ByteBudget(100);
  const first = await b.acquire(60);
  const second = b.acquire(60);
  assert.equal(await settled(second), false);
  assert.deepEqual([b.used, b.waiting], [60, 1]);
  first();
  first(); // a second release gives nothing back twice
  const release = await second;
  assert.deepEqual([b.used, b.waiting], [60, 0]);
  release();
  assert.equal(b.used, 0);
});

test('in order of arrival: a small request does not overtake a large one waiting', async () => {
  const b = new ByteBudget(100);
  const held = await b.acquire(50);
  const large = b.acquire(80);
  const small = b.acquire(10);
  assert.equal(await settled(small), false, 'the small one waits behind the large one');
  held();
  (await large)();
  (await small)();
  assert.equal(b.used, 0);
});

test('a request larger than the whole budget waits for it to be empty, then is granted', async () => {
  const b = new ByteBudget(100);
  const held = await b.acquire(10);
  const huge = b.acquire(500);
  assert.equal(await settled(huge), false);
  held();
  (await huge)();
  assert.equal(b.used, 0);
});

test('a waiter whose signal fires leaves the queue, and those behind it move up', async () => {
  const b = new ByteBudget(100);
  const held = await b.acquire(30);
  const stop = new AbortController();
  const large = b.acquire(90, stop.signal);
  const small = b.acquire(20);
  stop.abort(new Error('gone'));
  await assert.rejects(large, /gone/);
  (await small)();
  assert.deepEqual([b.used, b.waiting], [30, 0]);
  held();
});
