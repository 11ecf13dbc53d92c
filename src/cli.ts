#!/usr/bin/env node
/** The `herald` command. `serve` runs API and dispatcher in one process. */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startHerald } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';

const HELP = `Usage: herald <command> [options]

Commands:
  serve     run the API, the session page and the dispatcher (embedded SQLite under DATA_DIR)
  help      show this help

Configuration is read from the environment (and ./.env when present); see README.md.`;

async function serve(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`herald: configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const herald = await startHerald(config);
  console.log(`Herald is listening on ${herald.url}`);
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

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    strict: false,
    options: { help: { type: 'boolean', short: 'h' } },
  });
  const command = positionals[0] ?? 'help';
  if (values.help || command === 'help') {
    console.log(HELP);
    return;
  }
  if (command === 'serve') return serve();
  console.error(`herald: unknown command "${command}"\n\n${HELP}`);
  process.exit(2);
}

await main();
