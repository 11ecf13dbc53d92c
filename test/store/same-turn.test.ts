import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SameTurn, type Settled } from '../../src/store/same-turn.ts';

test('calls made in one turn are run together, in order; a later turn is a run of its own', async () => {
  const runs: number[][] = [];
  const together = new SameTurn<number, number>(async (args) => {
    runs.push(args);
    return args.map((n) => ({ ok: n * 10 }));
  });
  const first = await Promise.all([together.call(1), together.call(2), together.call(3)]);
  const second = await together.call(4);
  assert.deepEqual(first, [10, 20, 30]);
  assert.equal(second, 40);
  assert.deepEqual(runs, [[1, 2, 3], [4]]);
});

test('a call that fails fails alone; a run that fails fails every call of its turn', async () => {
  const apart = new SameTurn<number, number>(
    async (args): Promise<Settled<number>[]> =>
      args.map((n) => (n === 2 ? { error: new Error(`no ${n}`) } : { ok: n })),
  );
  const settled = await Promise.allSettled([apart.call(1), apart.call(2), apart.call(3)]);
  assert.deepEqual(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message)),
    [1, 'no 2', 3],
  );
  const broken = new SameTurn<number, number>(async () => {
    throw new Error('disk full');
  });
  const all = await Promise.allSettled([broken.call(1), broken.call(2)]);
  assert.deepEqual(
    all.map((s) => s.status === 'rejected' && (s.reason as Error).message),
    ['disk full', 'disk full'],
  );
});
