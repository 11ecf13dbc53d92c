/**
 * The second pass of `npm test`: the core's integration tests (API, delivery and sources) again, on PostgreSQL
 * (HERALD_TEST_STORE=postgres makes test/support start every Herald in a fresh schema of DATABASE_URL).
 * The real-schedule test (155 s) runs on SQLite only: it checks the seed's constants, which the store does not
 * touch; how a store wakes the dispatcher at due times is what the short-schedule retry tests cover on both.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const ON_SQLITE_ONLY = new Set(['default-schedule.test.ts']);

if (!process.env.DATABASE_URL?.trim()) {
  console.log(
    'PostgreSQL tests skipped: DATABASE_URL is unset (CI sets it; e.g. postgres://postgres@127.0.0.1:5432/test)',
  );
  process.exit(0);
}

const files = ['api', 'delivery', 'sources'].flatMap((dir) =>
  readdirSync(join(import.meta.dirname, dir))
    .filter((f) => f.endsWith('.test.ts') && !ON_SQLITE_ONLY.has(f))
    .map((f) => join(import.meta.dirname, dir, f)),
);
console.log(`Integration tests on PostgreSQL (${files.length} files)`);
const run = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], {
  stdio: 'inherit',
  env: { ...process.env, HERALD_TEST_STORE: 'postgres' },
});
process.exit(run.status ?? 1);
