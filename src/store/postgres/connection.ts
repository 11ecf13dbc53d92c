/**
 * How Herald connects to PostgreSQL, and which failures are the connection's rather than the query's. The schema
 * is the connection's search_path (e.g. `?search_path=herald` in DATABASE_URL), `public` by default.
 * The driver's faults on a lost connection are worked around here. Two faults cannot be, and
 * patches/postgres+3.4.9.patch (applied at npm install) fixes them as upstream fixes proposed for 3.4.9 do
 * (porsager/postgres#823, #1189):
 * - its write scheduler kept a cancelled write as "scheduled" after a cut, so that connection never sent its next
 *   start-up;
 * - begin() pipes its BEGIN behind the queries in flight on a busy connection, and reserved that connection for the
 *   transaction only when the pipeline still had room and the socket's buffer was not full: in a burst (WAHA posting
 *   every event at once) the BEGIN that filled a pipeline went out unreserved, PostgreSQL opened the transaction,
 *   the driver failed it with UNSAFE_TRANSACTION (a 500), and the pool went on handing that connection, inside a
 *   transaction nobody would commit, to other queries, whose writes were lost with it. A reserved connection whose
 *   socket drained was likewise handed to the pool in the middle of its transaction. Now BEGIN reserves its
 *   connection whenever it is written, and only the end of its transaction gives the connection back.
 */
import { Socket } from 'node:net';
import postgres, { type Sql } from 'postgres';

/** Times are epoch milliseconds in bigint columns: well inside Number.MAX_SAFE_INTEGER, so read as numbers. */
const BIGINT_AS_NUMBER = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => Number(x),
};

/**
 * Array parameters (`${ids}::text[]`) without the driver's fetch_types: its start-up query for array types leaves a
 * rejection nobody handles when a connection drops during it (an unhandled rejection, the process exits).
 * Herald's SQL sends arrays of text, integers and double precision, and reads none; the other simple types are
 * here so that a new query's array does not fail on a missing serializer.
 */
const arrayOf = (oid: number) => ({
  to: oid,
  from: [oid],
  serialize: (xs: unknown[]) =>
    `{${xs.map((x) => (x === null ? 'NULL' : `"${String(x).replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`,
  parse: (x: string) => x,
});
/** Array type oids: bool, int2, int4, text, varchar, int8, float4, float8, numeric. */
const ARRAY_OIDS = [1000, 1005, 1007, 1009, 1015, 1016, 1021, 1022, 1231];
const ARRAY_TYPES = Object.fromEntries(ARRAY_OIDS.map((oid) => [`array${oid}`, arrayOf(oid)]));

/** Reconnection: soon after the database comes back (the driver's default waits up to 20 s between tries). */
const backoff = (retries: number) => Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2);
/** A database that does not answer at all (no refusal) fails a call after this, not after the driver's 30 s. */
const CONNECT_TIMEOUT_S = 5;

/** Errors of the connection rather than of the query (the driver's codes and the socket's). */
export const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The reason when `err` is the database's own failure: the connection lost or refused, the server shutting down
 * or out of resources (SQLSTATE classes 08, 53, 57P), a read-only server (25006, after a failover); else null.
 */
export function postgresUnavailable(err: unknown): string | null {
  const e = err as { code?: string; message?: string };
  const code = e?.code;
  if (!code) return null;
  if (CONNECTION_CODES.has(code)) return `${e.message ?? code} (${code})`;
  if (/^(08|53|57P)/.test(code) || code === '25006') return `${e.message} (SQLSTATE ${code})`;
  return null;
}

/**
 * A connection's socket whose 'error' is held back until its 'close'. The driver settles the queries pending on a
 * connection at its socket's 'error', but forgets the connection only at 'close', which Node emits a turn later;
 * meanwhile the pool hands it new queries, and those are never settled (the caller waits for ever). With both
 * events at once, every query the connection took is settled.
 */
class HeldErrorSocket extends Socket {
  #error: unknown = undefined;

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'error') {
      this.#error ??= args[0];
      return true;
    }
    if (event === 'close' && this.#error !== undefined) super.emit('error', this.#error);
    return super.emit(event, ...args);
  }
}

/** The driver's socket factory: connected here, since the driver starts its handshake on what it is given. */
function openSocket(o: { host: string[]; port: number[]; path?: string | false }): Socket {
  const socket = new HeldErrorSocket();
  return o.path ? socket.connect(o.path) : socket.connect(o.port[0], o.host[0]);
}

export type Pool = Sql<Record<string, never>>;

/** A pool of connections to `url` as Herald uses them (see the settings above); `connection` adds run-time settings. */
export function connect(
  url: string,
  options: { max: number; connection?: Record<string, string> } & Partial<postgres.Options<never>>,
): Pool {
  const { connection, ...rest } = options;
  const pool = postgres(url, {
    types: { bigint: BIGINT_AS_NUMBER, ...ARRAY_TYPES },
    fetch_types: false,
    backoff,
    connect_timeout: CONNECT_TIMEOUT_S,
    // Not in the driver's type declarations, documented in its README ("Custom socket").
    ...{ socket: openSocket },
    onnotice: () => {},
    // Idle connections go back to the server; a quiet process holds none.
    idle_timeout: 30,
    ...rest,
    connection: {
      application_name: 'herald',
      ...connection,
      ...(process.env.HERALD_EXPLAIN
        ? {
            session_preload_libraries: 'auto_explain',
            'auto_explain.log_min_duration': '8',
            'auto_explain.log_analyze': 'on',
            'auto_explain.log_nested_statements': 'on',
          }
        : {}),
    },
  }) as unknown as Pool;
  return wholeRows(pool);
}

/**
 * The driver counts a result's rows in a variable of the connection that only a query's completion resets: when a
 * connection is cut while rows arrive, the next query on it (after the reconnection) gets its rows at that offset,
 * behind empty slots (a lookup of one row answered "not found"). Every query of `sql` made with a template drops
 * such leading slots from its result.
 */
export function wholeRows<S extends object>(sql: S): S {
  return new Proxy(sql, {
    apply(target, self, args) {
      const query = Reflect.apply(target as (...a: unknown[]) => unknown, self, args);
      if ((args[0] as { raw?: unknown } | undefined)?.raw && query instanceof Promise) {
        const then = query.then;
        Object.defineProperty(query, 'then', {
          value: (ok?: (v: unknown) => unknown, ko?: (e: unknown) => unknown) =>
            then.call(
              query,
              (rows: unknown) => (ok ? ok(dropLeadingHoles(rows)) : dropLeadingHoles(rows)),
              ko,
            ),
        });
      }
      return query;
    },
  });
}

function dropLeadingHoles(rows: unknown): unknown {
  if (Array.isArray(rows) && rows.length > 0 && !(0 in rows)) {
    let k = 0;
    while (k < rows.length && !(k in rows)) k++;
    rows.splice(0, k);
  }
  return rows;
}
