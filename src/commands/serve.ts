/** `herald serve`: runs Herald in this process (all roles, or only the API or only delivery) until a signal stops it. */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Herald, ROLES, type Role, STOP_MARGIN_MS, startHerald } from '../app.ts';
import { type Config, loadConfig } from '../config.ts';
import { SecretKeyMismatch } from '../secret-key.ts';
import { type Command, UsageError } from './command.ts';

const help = `Usage: herald serve [--role api|worker]

Runs Herald: the API, the session page and the dispatcher in one process, on embedded SQLite under DATA_DIR
(or PostgreSQL when DATABASE_URL is set). Prints the URL, and the admin key when it generated one.

Options:
  --role api|worker  run only the API and session page (api) or only delivery (worker; it serves /healthz,
                     /readyz and /metrics only); any number of each may share one PostgreSQL (DATABASE_URL).
                     Without it, everything runs in this process.

Configuration is read from the environment (and ./.env when present): PORT, HOST, DATA_DIR, DATABASE_URL,
ADMIN_API_KEY, SECRET_KEY, PUBLIC_URL, RETRY_SCHEDULE, DELIVERY_TIMEOUT_MS, MAX_RETRY_AFTER_S,
ALLOW_PRIVATE_DESTINATIONS, RETENTION_DAYS, LOG_LEVEL and more. See docs/configuration.md.`;

const ROLE_NOTE: Record<Role, string> = {
  all: '',
  api: ' (role api: API and session page, no delivery)',
  worker: ' (role worker: delivery; /healthz, /readyz and /metrics only)',
};

/** `--role`: all (default), api or worker; the split needs a database that several processes share. */
function role(args: string[], databaseUrl: string | null): Role {
  const value = parseArgs({ args, options: { role: { type: 'string' } } }).values.role ?? 'all';
  if (!(ROLES as readonly string[]).includes(value))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${value}"`);
  if (value !== 'all' && !databaseUrl) {
    throw new UsageError(
      `--role ${value} needs DATABASE_URL (PostgreSQL); the embedded SQLite database serves one process`,
    );
  }
  return value as Role;
}

/** Where the database is, as an operator names it: never a password. */
function storeName(config: Config): string {
  if (!config.databaseUrl) return `SQLite, ${resolve(config.dataDir, 'herald.db')}`;
  const url = new URL(config.databaseUrl);
  url.password = '';
  return `PostgreSQL, ${url.toString()}`;
}

/**
 * What a person needs after `npm start`, in a few lines that request logs do not bury (one line per request at
 * info, none for the page's refreshes): where Herald listens, what it stores where, and a generated admin key.
 */
export function startSummary(config: Config, url: string, role: Role, generatedKey: string | null): string {
  const lines = [
    `Herald is listening on ${url}${ROLE_NOTE[role]}`,
    `  store      ${storeName(config)}`,
    `  data dir   ${resolve(config.dataDir)}`,
  ];
  if (role !== 'worker') lines.push(`  session    ${url}/   API docs ${url}/docs`);
  if (generatedKey) {
    lines.push(
      `Admin API key (shown once, only its hash is stored): ${generatedKey}`,
      '  Lost it? Start with ADMIN_API_KEY set, or run "herald admin-key" to issue a new one.',
    );
  }
  return lines.join('\n');
}

async function run(args: string[]): Promise<void> {
  const config = loadConfig(process.env);
  const r = role(args, config.databaseUrl);
  // Listening for signals before starting: a stop asked for while Herald starts is made once it has started.
  let stopping = false;
  const { promise: running, resolve: started } = Promise.withResolvers<Herald>();
  const stop = async (signal: string, code = 0) => {
    if (stopping) {
      // A second signal means "now": leases make an abrupt exit safe (an attempt cut short is made again).
      console.error(`herald: ${signal} received again; exiting at once`);
      process.exit(1);
    }
    stopping = true;
    console.log(`herald: ${signal} received; finishing in-flight attempts`);
    // Attempts end by the delivery timeout; should anything else hang (a client holding a request open), exit anyway.
    const deadline = config.deliveryTimeoutMs + STOP_MARGIN_MS + 5000;
    setTimeout(() => {
      console.error(`herald: not stopped after ${deadline} ms; exiting`);
      process.exit(1);
    }, deadline).unref();
    try {
      await (await running).close();
    } catch (err) {
      console.error('herald: error while stopping', err);
      process.exit(1);
    }
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A hang-up (the terminal closed) stops as SIGTERM does: Herald has nothing to reload, and its configuration is read
  // at start only.
  process.on('SIGHUP', () => void stop('SIGHUP'));
  // The last resort, for a fault no code path expected (a library's bug, say): the process is in a state nobody
  // planned, so it stops as on SIGTERM, with exit code 1, for its supervisor to start it again. A 202 is only
  // answered after its commit and attempts are leased, so a stop at any moment loses nothing acknowledged.
  const fatal = (kind: string) => (err: unknown) => {
    console.error(`herald: ${kind}; stopping so that a supervisor restarts Herald:`, err);
    void stop(kind, 1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled promise rejection'));

  const herald = await startHerald(config, { role: r }).catch((err: Error) => {
    if (err instanceof SecretKeyMismatch) throw err;
    // A database that cannot be reached, a port in use: one line, not a stack trace.
    console.error(`herald: could not start: ${err.message}`);
    return process.exit(1);
  });
  console.log(startSummary(config, herald.url, r, herald.generatedAdminKey));
  // The same for whoever reads the JSON log alone, after the banner a person reads.
  herald.server.log.info({ url: herald.url, role: r }, `Herald is listening on ${herald.url}`);
  if (!config.publicUrl && /^(0\.0\.0\.0|::)$/.test(config.host)) {
    herald.server.log.warn(
      `PUBLIC_URL is unset: media links will name ${herald.url}, which receivers cannot reach; set PUBLIC_URL`,
    );
  }
  started(herald);
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the API, the session page and the dispatcher',
  help,
  run,
};
