/** The deadline wheel of the sender: one timer for every attempt's timeout, released when an attempt ends. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Deadlines } from '../../src/delivery/deadlines.ts';

test('a deadline aborts its signal with a TimeoutError once the timeout has passed, never before', async () => {
  const deadlines = new Deadlines(200);
  const started = performance.now();
  const d = deadlines.start();
  assert.equal(d.expired(), false);
  await once(d.signal, 'abort');
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 200, `aborted after ${elapsed} ms`);
  assert.equal(d.expired(), true);
  assert.equal((d.signal.reason as Error).name, 'TimeoutError');
  deadlines.close();
});

test('a released deadline never aborts, while the others still do', async () => {
  const deadlines = new Deadlines(100);
  const released = deadlines.start();
  const kept = deadlines.start();
  released.release();
  await once(kept.signal, 'abort');
  // Both were in the same slot: had the released one been kept, it would have aborted in the same tick.
  assert.equal(released.signal.aborted, false);
  deadlines.close();
});
