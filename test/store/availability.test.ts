/**
 * Readiness after the database failed: not ready while calls keep failing, ready again once none has failed for
 * SETTLE_MS and a probe write goes through, with no traffic needed.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Availability, SETTLE_MS } from '../../src/store/availability.ts';
import { StoreUnavailable } from '../../src/store/errors.ts';

function subject() {
  let now = 1_000_000;
  const probes: boolean[] = [];
  let failing = false;
  const availability = new Availability(
    async (write) => {
      probes.push(write);
      if (failing) throw new StoreUnavailable('connection refused');
    },
    () => now,
    null,
  );
  return {
    availability,
    probes,
    advance: (ms: number) => {
      now += ms;
    },
    setFailing: (value: boolean) => {
      failing = value;
    },
  };
}

test('up: ready, with a read-only probe', async () => {
  const s = subject();
  assert.deepEqual(await s.availability.check(), { ready: true });
  assert.deepEqual(s.probes, [false]);
});

test('a probe write that succeeds right after a failed call does not make the store ready', async () => {
  const s = subject();
  s.availability.markDown('database or disk is full (SQLITE_FULL)', new Error('full'));
  s.advance(SETTLE_MS - 1);
  const early = await s.availability.check();
  assert.equal(early.ready, false);
  assert.deepEqual(s.probes, [], 'no probe while a failure is recent');

  // Another call fails: the wait starts again from it, and the outage keeps its start.
  s.availability.markDown('database or disk is full (SQLITE_FULL)', new Error('full'));
  s.advance(SETTLE_MS - 1);
  assert.deepEqual(await s.availability.check(), {
    ready: false,
    reason: 'database or disk is full (SQLITE_FULL)',
    since: 1_000_000,
  });

  s.advance(1);
  assert.deepEqual(await s.availability.check(), { ready: true });
  assert.deepEqual(s.probes, [true], 'recovery is a write');
  assert.equal(s.availability.down, null);
});

test('a probe that fails keeps the store not ready', async () => {
  const s = subject();
  s.availability.markDown('connection refused', new Error('refused'));
  s.advance(SETTLE_MS);
  s.setFailing(true);
  const result = await s.availability.check();
  assert.equal(result.ready, false);
  assert.notEqual(s.availability.down, null);
  s.setFailing(false);
  s.advance(SETTLE_MS);
  assert.deepEqual(await s.availability.check(), { ready: true });
});
