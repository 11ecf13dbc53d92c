#!/usr/bin/env node
/** The `herald` command. Each sub-command is a Command (src/commands/command.ts) with its help next to its code. */
import { existsSync } from 'node:fs';
import { STOP_MARGIN_MS, startHerald } from './app.ts';
import { type Command, overview, UsageError } from './commands/command.ts';
import { receiverCommand } from './commands/receiver.ts';
import { rotateSecretKeyCommand } from './commands/rotate-secret-key.ts';
import { simulateCommand } from './commands/simulate.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { SecretKeyMismatch } from './secret-key.ts';

const SERVE_HELP = `Usage: herald serve [--role api|worker]

Runs Herald: the API, the session page and the dispatcher in one process, on embedded SQLite under DATA_DIR
(or PostgreSQL when DATABASE_URL is set). Prints the URL, and the admin key when it generated one.

Options:
  --role api|worker  run only the API (api) or only the dispatcher (worker), for scale-out on PostgreSQL;
                     without it, both run in this process

Configuration is read from the environment (and ./.env when present): PORT, HOST, DATA_DIR, DATABASE_URL,
ADMIN_API_KEY, SECRET_KEY, PUBLIC_URL, RETRY_SCHEDULE, DELIVERY_TIMEOUT_MS, MAX_RETRY_AFTER_S,
ALLOW_PRIVATE_DESTINATIONS, RETENTION_DAYS, LOG_LEVEL. See README.md, "Configuration".`;

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

async function serve(): Promise<void> {
  const settings = config();
  const herald = await startHerald(settings);
  console.log(`Herald is listening on ${herald.url}`);
  if (herald.generatedAdminKey) {
    console.log(`Admin API key (shown once, only its hash is stored): ${herald.generatedAdminKey}`);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal means "now": leases make an abrupt exit safe (an attempt cut short is made again).
      console.error(`herald: ${signal} received again; exiting at once`);
      process.exit(1);
    }
    stopping = true;
    console.log(`herald: ${signal} received; finishing in-flight attempts`);
    // Attempts end by the delivery timeout; should anything else hang (a client holding a request open), exit anyway.
    const deadline = settings.deliveryTimeoutMs + STOP_MARGIN_MS + 5000;
    setTimeout(() => {
      console.error(`herald: not stopped after ${deadline} ms; exiting`);
      process.exit(1);
    }, deadline).unref();
    try {
      await herald.close();
    } catch (err) {
      console.error('herald: error while stopping', err);
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

const serveCommand: Command = {
  name: 'serve',
  summary: 'run the API, the session page and the dispatcher',
  help: SERVE_HELP,
  run: serve,
};

/** One entry per command, in the order `herald --help` lists them. */
const COMMANDS: Command[] = [serveCommand, rotateSecretKeyCommand, receiverCommand, simulateCommand];

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const [name = 'help', ...rest] = process.argv.slice(2);
  const help = overview(COMMANDS);
  if (name === 'help' || name === '--help' || name === '-h') {
    const about = COMMANDS.find((c) => c.name === rest[0]);
    console.log(about ? about.help : help);
    return;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(`herald: unknown command "${name}"\n\n${help}`);
    process.exit(2);
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.help);
    return;
  }
  try {
    await command.run(rest);
  } catch (err) {
    // parseArgs throws TypeErrors with an ERR_PARSE_ARGS_* code for unknown or malformed options.
    const usage =
      err instanceof UsageError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS');
    if (!usage) throw err;
    console.error(`herald ${name}: ${(err as Error).message}\n\n${command.help}`);
    process.exit(2);
  }
}

try {
  await main();
} catch (err) {
  // Errors an operator can fix (configuration, a wrong key) print one line and exit 2, without a stack trace.
  if (!(err instanceof ConfigError || err instanceof SecretKeyMismatch)) throw err;
  console.error(`herald: ${err.message}`);
  process.exit(2);
}
