/** Runs Herald as a real child process (`src/cli.ts serve`), for tests that kill it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { apiRequest, type Reply, TEST_ENV } from './herald.ts';
import { ensureSchema, onPostgres, schemaFor } from './postgres.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

export interface ChildHerald {
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  request(method: string, path: string, body?: unknown): Promise<Reply>;
  /** Sends the signal (if still running) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node src/cli.ts serve [args]` on a free port over `dataDir` (and, in the PostgreSQL pass, over the schema
 * of `dataDir`, so that a restart finds its data); resolves once it prints its URL.
 */
export async function spawnHerald(
  dataDir: string,
  env: Record<string, string> = {},
  startTimeoutMs = 15_000,
  args: string[] = [],
): Promise<ChildHerald> {
  const database =
    onPostgres && !env.DATABASE_URL ? { DATABASE_URL: await ensureSchema(schemaFor(dataDir)) } : {};
  const child = spawn(process.execPath, [CLI, 'serve', ...args], {
    // A clean environment (no NODE_TEST_CONTEXT etc. from the runner) and no .env from the repository.
    cwd: dataDir,
    env: {
      PATH: process.env.PATH ?? '',
      ...TEST_ENV,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...database,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));

  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => fail(`did not start within ${startTimeoutMs} ms`), startTimeoutMs);
    const onData = () => {
      const m = /Herald is listening on (\S+)/.exec(output);
      if (!m) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      resolveUrl(m[1]);
    };
    function fail(why: string) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`herald child ${why}:\n${output}`));
    }
    child.stdout?.on('data', onData);
    exited.then(({ code, signal }) => fail(`exited (${code ?? signal}) before listening`));
  });

  return {
    url,
    child,
    output: () => output,
    exited,
    request: (method, path, body) => apiRequest(url, method, path, { body }),
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
