/**
 * What Herald asks of PostgreSQL per event, from pg_stat_statements, by kind:
 * - ingest: everything the api processes run (they connect as INGEST_ROLE): the ingest transaction, and whatever
 *   else a publish costs (key look-ups);
 * - claim and outcome: the workers' (WORKER_ROLE) statements, told apart by their text (src/store/postgres/claims.ts, outcomes.ts);
 *   BEGIN and COMMIT, which have no kind of their own, go two to each transaction, counted by its first statement;
 * - other: the workers' remaining statements (wake-up timer's due-time query, queue gauges, health checks).
 * Time is pg_stat_statements' execution time; BEGIN/COMMIT's time is shared out by their count.
 */
import type postgres from 'postgres';

export const INGEST_ROLE = 'herald_api';
export const WORKER_ROLE = 'herald_worker';

export const KINDS = ['ingest', 'claim', 'outcome', 'other'] as const;
export type Kind = (typeof KINDS)[number];
export type ByKind = Record<Kind, { statements: number; execMs: number }>;

/** Worker statements by kind; the first pattern of each is the statement that opens its transaction. */
const WORKER_KINDS: [Kind, RegExp[]][] = [
  // claimDue: the due webhooks (locking each), the scan setting, their leases held elsewhere, the claim itself.
  ['claim', [/pg_advisory_xact_lock/, /enable_bitmapscan/, /AS leased FROM deliveries/, /WITH wanted AS/]],
  // recordAttempts: the attempts logged and applied in one statement, then the webhooks' health and hourly
  // counts; a 410 locks and disables its webhook.
  [
    'outcome',
    [
      /jsonb_to_recordset/,
      /INTO webhook_hours/,
      /INTO webhook_health/,
      /FROM webhook_hours/,
      /FOR NO KEY UPDATE/,
      /SET enabled = false/,
      /'webhook_disabled'/,
    ],
  ],
];
const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback)\b/i;

/** Both roles, allowed to do what a Herald that migrates its own schema does. */
export async function createRoles(sql: postgres.Sql): Promise<void> {
  for (const role of [INGEST_ROLE, WORKER_ROLE]) await sql.unsafe(`CREATE ROLE ${role} LOGIN SUPERUSER`);
  await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
}

export async function resetStatements(sql: postgres.Sql): Promise<void> {
  await sql`SELECT pg_stat_statements_reset()`;
}

/** Statements (calls) and execution time by kind in `database` since the last reset. */
export async function statementsByKind(sql: postgres.Sql, database: string): Promise<ByKind> {
  const rows = await sql<{ role: string; query: string; calls: number; exec_ms: number }[]>`
    SELECT r.rolname AS role, s.query, s.calls::float8 AS calls, s.total_exec_time AS exec_ms
    FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid JOIN pg_database d ON d.oid = s.dbid
    WHERE d.datname = ${database} AND r.rolname IN (${INGEST_ROLE}, ${WORKER_ROLE})`;
  const out = Object.fromEntries(KINDS.map((k) => [k, { statements: 0, execMs: 0 }])) as ByKind;
  const control = { calls: 0, execMs: 0 };
  const transactions: Partial<Record<Kind, number>> = {};
  for (const r of rows) {
    if (r.role === INGEST_ROLE) {
      out.ingest.statements += r.calls;
      out.ingest.execMs += r.exec_ms;
    } else if (TRANSACTION_CONTROL.test(r.query)) {
      control.calls += r.calls;
      control.execMs += r.exec_ms;
    } else {
      const [kind, patterns] = WORKER_KINDS.find(([, p]) => p.some((re) => re.test(r.query))) ?? [
        'other',
        [],
      ];
      out[kind].statements += r.calls;
      out[kind].execMs += r.exec_ms;
      if (patterns[0]?.test(r.query)) transactions[kind] = (transactions[kind] ?? 0) + r.calls;
    }
  }
  // Two per claim or outcome transaction; the rest (releases, disables run alone) are the workers' other.
  const perCall = control.calls > 0 ? control.execMs / control.calls : 0;
  let left = control.calls;
  for (const [kind, n] of Object.entries(transactions) as [Kind, number][]) {
    const calls = Math.min(2 * n, left);
    left -= calls;
    out[kind].statements += calls;
    out[kind].execMs += calls * perCall;
  }
  out.other.statements += left;
  out.other.execMs += left * perCall;
  return out;
}

/** One statement's cost in pg_stat_statements: what `--statements` prints (bench/scale.ts). */
export interface StatementCost {
  role: string;
  calls: number;
  rows: number;
  execMs: number;
  walRecords: number;
  blocksHit: number;
  query: string;
}

/** The `n` statements of `database` that took the most execution time since the last reset, costliest first. */
export async function costliestStatements(
  sql: postgres.Sql,
  database: string,
  n: number,
): Promise<StatementCost[]> {
  return sql<StatementCost[]>`
    SELECT r.rolname AS role, s.calls::float8 AS calls, s.rows::float8 AS rows, s.total_exec_time AS "execMs",
      s.wal_records::float8 AS "walRecords", s.shared_blks_hit::float8 AS "blocksHit",
      left(regexp_replace(s.query, '[[:space:]]+', ' ', 'g'), 90) AS query
    FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid JOIN pg_database d ON d.oid = s.dbid
    WHERE d.datname = ${database} ORDER BY s.total_exec_time DESC LIMIT ${n}`;
}
