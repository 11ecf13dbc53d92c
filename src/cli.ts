#!/usr/bin/env node
/** The `herald` command: `serve` runs API, session page and dispatcher in one process; `receiver` a test endpoint. */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ROLES, type Role, startHerald } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { createReferenceReceiver } from './receiver/reference-server.ts';

const HELP = `Usage: herald <command> [options]

Commands:
  serve                          run the API, the session page and the dispatcher (embedded SQLite under DATA_DIR)
  serve --role api|worker        with DATABASE_URL: only the API and session page, or only delivery (any number of each)
  receiver [--port 9000] [--secret S] [--host 127.0.0.1]
                                 run the reference receiver: verifies signatures (401 when wrong or older
                                 than 300 s), ignores repeated event ids, prints one line per delivery
  help                           show this help

Configuration of serve is read from the environment (and ./.env when present); see README.md.`;

function config(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`herald: configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/** `--role`: all (default), api or worker; the split needs a database that several processes share. */
function role(args: string[], c: Config): Role {
  let value: string | undefined;
  try {
    value = parseArgs({ args, options: { role: { type: 'string' } } }).values.role;
  } catch (err) {
    console.error(`herald serve: ${(err as Error).message}`);
    process.exit(2);
  }
  if (value === undefined) return 'all';
  if (!(ROLES as readonly string[]).includes(value)) {
    console.error(`herald serve: --role must be one of ${ROLES.join(', ')}, got "${value}"`);
    process.exit(2);
  }
  if (value !== 'all' && !c.databaseUrl) {
    console.error(
      `herald serve: --role ${value} needs DATABASE_URL (PostgreSQL); the embedded SQLite database serves one process`,
    );
    process.exit(2);
  }
  return value as Role;
}

const ROLE_NOTE: Record<Role, string> = {
  all: '',
  api: ' (role api: API and session page, no delivery)',
  worker: ' (role worker: delivery; /healthz and /readyz only)',
};

async function serve(args: string[]): Promise<void> {
  const c = config();
  const r = role(args, c);
  const herald = await startHerald(c, { role: r }).catch((err: Error) => {
    // A database that cannot be reached or a key that does not match: one line, not a stack trace.
    console.error(`herald: could not start: ${err.message}`);
    return process.exit(1);
  });
  console.log(`Herald is listening on ${herald.url}${ROLE_NOTE[r]}`);
  if (herald.generatedAdminKey) {
    console.log(`Admin API key (shown once, only its hash is stored): ${herald.generatedAdminKey}`);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`herald: ${signal} received; finishing in-flight attempts`);
    await herald.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function receiver(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '9000' },
      host: { type: 'string', default: '127.0.0.1' },
      secret: { type: 'string' },
    },
  });
  const port = Number(values.port);
  createReferenceReceiver({ secret: values.secret }).listen(port, values.host, () => {
    const signing = values.secret ? 'verifying signatures' : 'no --secret: accepting unsigned deliveries';
    console.log(`Reference receiver on http://${values.host}:${port}/ (${signing})`);
  });
}

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const [command = 'help', ...rest] = process.argv.slice(2);
  if (command === 'help' || command === '--help' || command === '-h' || rest.includes('--help')) {
    console.log(HELP);
    return;
  }
  if (command === 'serve') return serve(rest);
  if (command === 'receiver') return receiver(rest);
  console.error(`herald: unknown command "${command}"\n\n${HELP}`);
  process.exit(2);
}

await main();
