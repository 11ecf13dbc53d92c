#!/usr/bin/env node
/** The `herald` command: `serve` runs API, session page and dispatcher in one process; `receiver` a test endpoint. */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { STOP_MARGIN_MS, startHerald } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { createReferenceReceiver } from './receiver/reference-server.ts';

const HELP = `Usage: herald <command> [options]

Commands:
  serve                          run the API, the session page and the dispatcher (embedded SQLite under DATA_DIR)
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
  if (command === 'serve') return serve();
  if (command === 'receiver') return receiver(rest);
  console.error(`herald: unknown command "${command}"\n\n${HELP}`);
  process.exit(2);
}

await main();
