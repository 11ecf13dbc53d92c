/**
 * One `herald` sub-command: its name, a one-line summary for `herald --help`, its own full help for
 * `herald <command> --help`, and what it runs. Each command lives in its own file with its help next to its code.
 */
export interface Command {
  name: string;
  summary: string;
  /** The full text printed by `herald <name> --help`. */
  help: string;
  run(args: string[]): Promise<void> | void;
}

/** The text of `herald --help` and `herald help`. */
export function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`);
  return [
    'Usage: herald <command> [options]',
    '',
    'Commands:',
    ...lines,
    `  ${'help'.padEnd(width)}show this help`,
    '',
    'Run "herald <command> --help" for the options of a command.',
  ].join('\n');
}

/** A bad command line: printed with the command's help, exit code 2. */
export class UsageError extends Error {}
