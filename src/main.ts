/**
 * The `herald` command, reached through bin/herald.js (`npx herald`) or src/cli.ts. Each sub-command is a Command
 * (src/commands/command.ts) with its help next to its code.
 */
import { existsSync } from 'node:fs';
import { adminKeyCommand } from './commands/admin-key.ts';
import { type Command, overview, UsageError } from './commands/command.ts';
import { receiverCommand } from './commands/receiver.ts';
import { rotateSecretKeyCommand } from './commands/rotate-secret-key.ts';
import { serveCommand } from './commands/serve.ts';
import { simulateCommand } from './commands/simulate.ts';
import { ConfigError } from './config.ts';
import { holdLifeline } from './lifeline.ts';
import { SecretKeyMismatch } from './secret-key.ts';
import { StoreInUse } from './store/sqlite/process-lock.ts';

/** One entry per command, in the order `herald --help` lists them. */
const COMMANDS: Command[] = [
  serveCommand,
  adminKeyCommand,
  rotateSecretKeyCommand,
  receiverCommand,
  simulateCommand,
];

async function main(): Promise<void> {
  holdLifeline();
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
  if (!(err instanceof ConfigError || err instanceof SecretKeyMismatch || err instanceof StoreInUse))
    throw err;
  console.error(`herald: ${err.message}`);
  process.exit(2);
}
