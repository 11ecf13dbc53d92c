/**
 * A source's state as the store keeps it is the last one the runner reported, whatever order the store's writes
 * would finish in. On PostgreSQL two writes at once may commit in either order (the pool has several connections):
 * a source once stayed 'connecting' in the API while it consumed. Here the first write, 'connecting', is held back
 * until the runner has reported 'consuming', which is the order in which PostgreSQL had committed them.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import type { SourceObserver } from '../../src/metrics/source-metrics.ts';
import { SourceRunner } from '../../src/sources/runner.ts';
import type { IngestContext } from '../../src/sources/source-ingest.ts';
import { openSqliteStore } from '../../src/store/open/sqlite.ts';
import { newSource } from '../../src/store/records.ts';
import { records } from '../store/records.ts';
import { eventually } from '../support/herald.ts';
import { testQueue } from './rig.ts';

test("a source that reached 'consuming' is stored as consuming, though its 'connecting' was written last", async (t) => {
  const store = openSqliteStore(join(mkdtempSync(join(tmpdir(), 'herald-state-')), 'herald.db'));
  const q = await testQueue('redis');
  t.after(async () => {
    await q.remove();
    await store.close();
  });
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  // The store's own write, wrapped: 'connecting' waits for `release`.
  const write = store.sources.setSourceState.bind(store.sources);
  let [writing, written] = [0, 0];
  store.sources.setSourceState = async (sourceId, state, lastError, now) => {
    writing++;
    try {
      if (state === 'connecting') await held;
      await write(sourceId, state, lastError, now);
      written++;
    } finally {
      writing--;
    }
  };
  const up: boolean[] = [];
  const observer: SourceObserver = {
    sourceMessages() {},
    sourceUp: (_id, isUp) => up.push(isUp),
    sourceGone() {},
  };
  const now = Date.now();
  const instance_id = await records(() => store).instance();
  const source_id = `src_${randomBytes(8).toString('hex')}`;
  await store.sources.createSource(
    newSource(source_id, { url: q.url(), url_sealed: null, format: 'herald', instance_id }, now),
  );
  // No message is published: the ingest's media and events are never reached.
  const ctx = {
    config: loadConfig({}),
    store,
    clock: Date.now,
  } as unknown as IngestContext;
  const runner = new SourceRunner({
    ctx,
    secretBox: new SecretBox(randomBytes(32)),
    logger: pino({ level: 'silent' }),
    observer,
    pollMs: 50,
  });
  runner.start();
  try {
    await eventually(async () => up.includes(true) || undefined, 10_000, "the runner to report 'consuming'");
    release();
    await eventually(
      async () => (written >= 2 && writing === 0) || undefined,
      10_000,
      'both state writes to finish',
    );
    assert.equal((await store.sources.getSource(source_id))?.state, 'consuming');
  } finally {
    await runner.stop();
  }
});
