/**
 * A delivery's life through the SQLite store alone, as W1 drives it: events ingested 500 at a time with the
 * hand-off's room, and each handed-off delivery's outcome (delivered) recorded 64 at a time, as the dispatcher
 * writes a turn's outcomes together. No HTTP, no threads, no timers: the work is the same on every run, so that
 * `valgrind --tool=callgrind` counts the same instructions on a slow machine as on a fast one, where CPU time moves
 * 2× from day to day. Run it at two counts and take the difference per delivery, which leaves start-up out:
 *
 *   valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=/tmp/cg.1000 \
 *     node_modules/node/bin/node bench/store-life.ts WORKTREE 1000        # and again at 5000
 *
 * WORKTREE is a checkout whose src/ is measured, so that two commits can be alternated from one place. Without
 * valgrind it prints µs of CPU per delivery, after a first round to warm up.
 *
 * Usage: npx node bench/store-life.ts WORKTREE [DELIVERIES=20000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { webhookRecord } from '../test/support/records.ts';
import { baselineEventId, deliveryBody, messagePayload } from './payloads.ts';

const [worktree = '.', count = '20000'] = process.argv.slice(2);
const src = resolve(worktree, 'src');
const { openSqliteStore } = await import(`${src}/store/open/sqlite.ts`);
const { route } = await import(`${src}/domain/routing.ts`);
const { newId } = await import(`${src}/domain/ids.ts`);

const BATCH = 500;
const OUTCOMES = 64;
const dir = mkdtempSync(join(tmpdir(), 'herald-store-life-'));
const store = await openSqliteStore(join(dir, 'herald.db'));
const now = Date.now();
const instance_id = newId('ins', now);
await store.catalog.createInstance({
  instance_id,
  name: 'bench',
  status: 'WORKING',
  phone: null,
  created_at: now,
});
const webhook_id = newId('whk', now);
await store.webhooks.createWebhook(webhookRecord({ webhook_id, instance_id }, now));

let next = 0;
async function life(deliveries: number): Promise<void> {
  for (let done = 0; done < deliveries; done += BATCH) {
    const drafts = Array.from({ length: BATCH }, () => {
      const i = next++;
      return {
        event_id: baselineEventId(i),
        event: 'message',
        instance_id,
        timestamp: now,
        payload: messagePayload(i),
        body: deliveryBody(i, now),
      };
    });
    const results = await store.events.ingest(instance_id, drafts, route, now, {
      leaseMs: 60_000,
      room: new Map([[webhook_id, BATCH]]),
    });
    const claims = results.flatMap((r: { handedOff?: unknown[] }) => r.handedOff ?? []);
    if (claims.length !== BATCH) throw new Error(`${claims.length} of ${BATCH} deliveries handed off`);
    for (let i = 0; i < claims.length; i += OUTCOMES) {
      const at = Date.now();
      await store.outcomes.recordAttempts(
        claims.slice(i, i + OUTCOMES).map((claim: unknown) => ({
          claim,
          outcome: {
            started_at: at,
            duration_ms: 1,
            status_code: 200,
            error: null,
            response_body: 'ok',
            retry_after: null,
          },
          decision: { kind: 'delivered' },
        })),
        at,
      );
    }
  }
}

const n = Math.ceil(Number(count) / BATCH) * BATCH;
await life(BATCH * 4);
const before = process.cpuUsage();
await life(n);
const used = process.cpuUsage(before);
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(`${n} deliveries: ${((used.user + used.system) / n).toFixed(1)} µs of CPU per delivery`);
