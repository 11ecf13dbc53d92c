/** Admission of attempts (src/delivery/lanes.ts): one lane per webhook, its limit, its window, the process-wide cap. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type LaneJob, Lanes } from '../../src/delivery/lanes.ts';

/** Lanes whose started jobs are recorded in order. */
function lanes(maxRunning = 100) {
  const started: string[] = [];
  return { l: new Lanes<string>(maxRunning, (item) => started.push(item)), started };
}
const job = (webhookId: string, item: string, o: Partial<LaneJob<string>> = {}): LaneJob<string> => ({
  webhookId,
  item,
  limit: 2,
  startAt: 0,
  startBy: 1000,
  gapMs: 0,
  ...o,
});

test('a webhook runs at most its limit at once; the next waiting one starts the moment one ends', () => {
  const { l, started } = lanes();
  l.submit([job('whk_a', 'a1'), job('whk_a', 'a2'), job('whk_a', 'a3'), job('whk_b', 'b1')], 0);
  assert.deepEqual(started, ['a1', 'a2', 'b1'], 'a3 waits; another webhook has its own limit');
  assert.equal(l.running, 3);
  assert.deepEqual(l.finished('whk_a', 40), []);
  assert.deepEqual(started, ['a1', 'a2', 'b1', 'a3']);
  l.finished('whk_a', 50);
  assert.deepEqual(l.drain(), [], 'nothing waits');
});

test('waiting jobs start in the order they came, batch after batch', () => {
  const { l, started } = lanes();
  l.submit([job('whk_a', 'a1', { limit: 1 }), job('whk_a', 'a2', { limit: 1 })], 0);
  l.finished('whk_a', 5);
  l.submit([job('whk_a', 'a3', { limit: 1 }), job('whk_a', 'a4', { limit: 1 })], 6);
  l.finished('whk_a', 9);
  l.finished('whk_a', 9);
  assert.deepEqual(started, ['a1', 'a2', 'a3', 'a4']);
});

test('a job past its window is handed back, never started: when a slot frees, or when its window is due', () => {
  const { l, started } = lanes();
  l.submit(
    [
      job('whk_a', 'a1', { limit: 1 }),
      job('whk_a', 'late', { limit: 1, startBy: 100 }),
      job('whk_a', 'a3', { limit: 1 }),
    ],
    0,
  );
  assert.deepEqual(l.finished('whk_a', 200), ['late']);
  assert.deepEqual(started, ['a1', 'a3']);
  // A receiver that hangs never frees a slot: the timer at wakeAt finds what waited too long.
  l.submit([job('whk_a', 'stuck', { limit: 1, startBy: 300 })], 250);
  assert.equal(l.wakeAt(), 301);
  assert.deepEqual(l.tick(301), ['stuck']);
  assert.equal(l.wakeAt(), null);
});

test('a job waits for its slot (a rate limit) and starts at it; a job past its window at submit goes back at once', () => {
  const { l, started } = lanes();
  const expired = l.submit(
    [
      job('whk_a', 'now'),
      job('whk_a', 'later', { startAt: 200, startBy: 1200 }),
      job('whk_b', 'gone', { startBy: 5 }),
    ],
    10,
  );
  assert.deepEqual(expired, ['gone']);
  assert.deepEqual(started, ['now']);
  assert.equal(l.wakeAt(), 200);
  assert.deepEqual(l.tick(199), []);
  assert.deepEqual(started, ['now']);
  l.tick(200);
  assert.deepEqual(started, ['now', 'later']);
});

test('the process-wide cap: a lane held back starts in turn as any other lane frees a slot', () => {
  const { l, started } = lanes(3);
  l.submit(
    [job('whk_a', 'a1'), job('whk_a', 'a2'), job('whk_b', 'b1'), job('whk_b', 'b2'), job('whk_c', 'c1')],
    0,
  );
  assert.deepEqual(started, ['a1', 'a2', 'b1']);
  assert.equal(l.running, 3);
  l.finished('whk_a', 1);
  assert.deepEqual(started, ['a1', 'a2', 'b1', 'b2'], 'b was held back first');
  l.finished('whk_b', 2);
  assert.deepEqual(started, ['a1', 'a2', 'b1', 'b2', 'c1']);
  assert.equal(l.running, 3);
});

test('a raised limit lets more of the webhook start as its requests end; a lowered one holds it', () => {
  const { l, started } = lanes();
  l.submit([job('whk_a', 'a1', { limit: 1 }), job('whk_a', 'a2', { limit: 1 })], 0);
  l.submit([job('whk_a', 'a3', { limit: 3 })], 1);
  assert.deepEqual(started, ['a1', 'a2', 'a3']);
  l.submit([job('whk_a', 'a4', { limit: 1 })], 2);
  l.finished('whk_a', 3);
  l.finished('whk_a', 3);
  assert.deepEqual(started, ['a1', 'a2', 'a3'], 'two still run: over the lowered limit of 1');
  l.finished('whk_a', 4);
  assert.deepEqual(started, ['a1', 'a2', 'a3', 'a4']);
});

test('drain hands back every waiting job, and the lanes forget idle webhooks', () => {
  const { l } = lanes();
  l.submit(
    [
      job('whk_a', 'a1', { limit: 1 }),
      job('whk_a', 'a2', { limit: 1 }),
      job('whk_b', 'b1', { limit: 1 }),
      job('whk_b', 'b2', { limit: 1 }),
    ],
    0,
  );
  assert.deepEqual(l.drain().sort(), ['a2', 'b2']);
  assert.deepEqual(l.drain(), []);
  l.finished('whk_a', 1);
  l.finished('whk_b', 1);
  assert.equal(l.running, 0);
});

test('a long lane does not shift its queue at every start', () => {
  const { l, started } = lanes(10_000);
  l.submit(
    Array.from({ length: 5000 }, (_, i) => job('whk_a', `a${i}`, { limit: 1, startBy: 1e9 })),
    0,
  );
  for (let i = 0; i < 4999; i++) l.finished('whk_a', i);
  assert.equal(started.length, 5000);
  assert.equal(started[4999], 'a4999');
});

test('a rate limit keeps a lane’s starts apart, even when their slots have all passed (a late batch does not burst)', () => {
  const { l, started } = lanes();
  const paced = (item: string, startAt: number) =>
    job('whk_a', item, { startAt, startBy: 10_000, gapMs: 200, limit: 64 });
  // Slots 0, 200, 400 arrive late, at 500: the first starts at once, the others 200 ms apart.
  l.submit([paced('p0', 0), paced('p1', 200), paced('p2', 400)], 500);
  assert.deepEqual(started, ['p0']);
  assert.equal(l.wakeAt(), 700);
  l.tick(699);
  assert.deepEqual(started, ['p0']);
  l.tick(700);
  assert.deepEqual(started, ['p0', 'p1']);
  l.finished('whk_a', 710);
  l.finished('whk_a', 720);
  assert.equal(l.wakeAt(), 900, 'an idle lane still keeps its spacing');
  l.tick(900);
  assert.deepEqual(started, ['p0', 'p1', 'p2']);
});
