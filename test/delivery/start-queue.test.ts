/** The sender thread's per-webhook cap and its waiting requests (src/delivery/start-queue.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StartQueue } from '../../src/delivery/start-queue.ts';

test('a webhook runs at most its limit at once; the next waiting one starts when one ends', () => {
  const q = new StartQueue<string>();
  assert.equal(q.admit('whk_a', 2, 1000, 'a1'), true);
  assert.equal(q.admit('whk_a', 2, 1000, 'a2'), true);
  assert.equal(q.admit('whk_a', 2, 1000, 'a3'), false, 'over the limit: it waits');
  assert.equal(q.admit('whk_b', 2, 1000, 'b1'), true, 'another webhook has its own limit');
  const expired: string[] = [];
  assert.deepEqual(q.finished('whk_a', 40, expired), ['a3']);
  assert.deepEqual(q.finished('whk_a', 50, expired), [], 'nothing else waits');
  assert.deepEqual(expired, []);
  assert.deepEqual(q.drain(), [], 'nothing waits');
});

test('waiting requests start in the order they came, even once others are waiting behind them', () => {
  const q = new StartQueue<string>();
  q.admit('whk_a', 1, 1000, 'a1');
  q.admit('whk_a', 1, 1000, 'a2');
  q.finished('whk_a', 5, []); // a2 starts
  q.admit('whk_a', 1, 1000, 'a3');
  q.admit('whk_a', 1, 1000, 'a4');
  assert.deepEqual(q.finished('whk_a', 9, []), ['a3']);
  assert.deepEqual(q.finished('whk_a', 9, []), ['a4']);
});

test('a request past its start deadline is handed back, never started', () => {
  const q = new StartQueue<string>();
  q.admit('whk_a', 1, 1000, 'a1');
  q.admit('whk_a', 1, 100, 'late');
  q.admit('whk_a', 1, 1000, 'a3');
  const expired: string[] = [];
  assert.deepEqual(q.finished('whk_a', 200, expired), ['a3']);
  assert.deepEqual(expired, ['late']);
});

test('a raised limit lets more of the webhook start as its requests end', () => {
  const q = new StartQueue<string>();
  q.admit('whk_a', 1, 1000, 'a1');
  q.admit('whk_a', 1, 1000, 'a2');
  q.admit('whk_a', 3, 1000, 'a3');
  assert.deepEqual(q.finished('whk_a', 1, []), ['a2', 'a3']);
});

test('drain hands back every waiting request', () => {
  const q = new StartQueue<string>();
  q.admit('whk_a', 1, 1000, 'a1');
  q.admit('whk_a', 1, 1000, 'a2');
  q.admit('whk_b', 1, 1000, 'b1');
  q.admit('whk_b', 1, 1000, 'b2');
  assert.deepEqual(q.drain().sort(), ['a2', 'b2']);
  assert.deepEqual(q.drain(), [], 'nothing waits any more');
  assert.deepEqual(q.finished('whk_a', 1, []), [], 'a1 ends with nothing left to start');
});
