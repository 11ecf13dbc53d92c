/** Runs `herald <command>` as a real child process and watches what it prints. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first match of `pattern` in the output; rejects after `timeoutMs` or on exit. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

export function runCli(args: string[], env: Record<string, string> = {}, cwd?: string): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    // A clean environment: nothing from the test runner, no HERALD_* from the developer's shell.
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  const append = (s: string) => {
    output += s;
    for (const l of listeners) l();
  };
  child.stdout?.setEncoding('utf8').on('data', append);
  child.stderr?.setEncoding('utf8').on('data', append);
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let done = false;
  exited.then(() => {
    done = true;
    for (const l of listeners) l();
  });

  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolveMatch, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no ${pattern} within ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
        const check = () => {
          const m = pattern.exec(output);
          if (m) finish(null, m);
          else if (done) finish(new Error(`exited without printing ${pattern}:\n${output}`));
        };
        function finish(err: Error | null, m?: RegExpExecArray) {
          clearTimeout(timer);
          listeners.delete(check);
          if (err) reject(err);
          else resolveMatch(m as RegExpExecArray);
        }
        listeners.add(check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
