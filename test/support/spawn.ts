/**
 * Runs Herald as users do, for tests that kill it: `npm start` or `npx herald serve` from the project, in a process
 * group of its own (as a terminal, a supervisor or `setsid` would start it), so that a test can kill the group or
 * the one PID it knows. After any exit it checks that no process of that start is left: a server that outlived its
 * launcher holds the port and the data directory, and a restart fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { apiRequest, eventually, type Reply, TEST_ENV } from './herald.ts';
import { ensureSchema, onPostgres, schemaFor } from './postgres.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The environment variable that marks every process a start of this file begins. */
export const START_MARKER = 'HERALD_TEST_START=';

/**
 * How a user starts Herald: `npm start`; `npx herald serve`; the launcher itself, as a systemd unit's ExecStart
 * would (`node bin/herald.js serve`); or that as PID 1 of a PID namespace of its own, as a container's entry point.
 */
export type Entry = 'npm start' | 'npx herald' | 'herald' | 'herald as PID 1';

function commandFor(entry: Entry, args: string[]): string[] {
  const launcher = [process.execPath, resolve(ROOT, 'bin/herald.js'), 'serve', ...args];
  if (entry === 'npm start') return ['npm', 'start', '--', ...args];
  if (entry === 'npx herald') return ['npx', 'herald', 'serve', ...args];
  if (entry === 'herald') return launcher;
  return ['unshare', '--pid', '--fork', ...launcher];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildHerald {
  url: string;
  port: number;
  /** The process the test started (npm's, the launcher's, or unshare's). */
  child: ChildProcess;
  /** Everything the processes printed so far (stdout and stderr). */
  output(): string;
  /** Resolves when the process the test started has exited. */
  exited: Promise<Exit>;
  request(method: string, path: string, body?: unknown): Promise<Reply>;
  /**
   * Sends the signal to the PID (or to the whole process group) if still running, waits for the exit, and then
   * for every process of this start to be gone within a second (throwing, with their command lines, if not).
   */
  kill(signal: NodeJS.Signals, target?: 'pid' | 'group' | 'all'): Promise<Exit>;
  /** The PIDs of this start's processes still running (npm, the shell, the launcher, the server). */
  processes(): number[];
  /** The PID of the launcher (bin/herald.js) and of the server it runs (src/main.ts). */
  pids(): { launcher: number; server: number };
}

/**
 * The PIDs of the processes whose environment holds `marker` (each start gets one of its own), or any variable that
 * begins with it when it ends in `=`. A zombie has no environment: it holds neither port nor data.
 */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const entries = readFileSync(`/proc/${name}/environ`, 'latin1').split('\0');
      const prefix = marker.endsWith('=');
      if (entries.some((e) => e === marker || (prefix && e.startsWith(marker)))) found.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '(gone)';
  }
}

/** Waits until none of `marker`'s processes is left, at most `withinMs`. */
export async function assertNoneLeft(marker: string, withinMs = 1000): Promise<void> {
  try {
    await eventually(async () => (processesWith(marker).length === 0 ? true : undefined), withinMs);
  } catch {
    const left = processesWith(marker).map((pid) => `${pid} ${commandLine(pid)}`);
    if (left.length)
      throw new Error(`Herald processes left ${withinMs} ms after the exit:\n${left.join('\n')}`);
  }
}

/**
 * Starts Herald (`entry`, `serve [args]`) on a free port over `dataDir` (and, in the PostgreSQL pass, over the schema
 * of `dataDir`, so that a restart finds its data); resolves once it prints its URL. `env.PORT` picks the port, e.g.
 * the one of the process a restart replaces.
 */
export async function spawnHerald(
  dataDir: string,
  env: Record<string, string> = {},
  startTimeoutMs = 15_000,
  args: string[] = [],
  entry: Entry = 'npm start',
): Promise<ChildHerald> {
  const database =
    onPostgres && !env.DATABASE_URL ? { DATABASE_URL: await ensureSchema(schemaFor(dataDir)) } : {};
  const startId = randomUUID();
  const marker = `${START_MARKER}${startId}`;
  const [command, ...commandArgs] = commandFor(entry, args);
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    // A clean environment (no NODE_TEST_CONTEXT or npm_* variables from the runner), PATH with the project's Node.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      [START_MARKER.slice(0, -1)]: startId,
      ...TEST_ENV,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...database,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
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
  const running = () => child.exitCode === null && child.signalCode === null;
  // Every process of the start writes to these pipes: they end once the last of them is gone.
  const outputEnded = once(child, 'close').then(() => undefined);

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
      if (running()) process.kill(-(child.pid as number), 'SIGKILL');
      reject(new Error(`herald (${entry}) ${why}:\n${output}`));
    }
    child.stdout?.on('data', onData);
    exited.then(({ code, signal }) => fail(`exited (${code ?? signal}) before listening`));
  });

  return {
    url,
    port: Number(new URL(url).port),
    child,
    output: () => output,
    exited,
    request: (method, path, body) => apiRequest(url, method, path, { body }),
    async kill(signal, target = 'pid') {
      if (running()) {
        // 'all': every process of the start at the same instant, as a machine's crash or the OOM killer of a
        // container would; the server otherwise outlives a killed group by the moment its lifeline takes.
        const pids =
          target === 'all'
            ? processesWith(marker)
            : [target === 'group' ? -(child.pid as number) : (child.pid as number)];
        for (const pid of pids) {
          try {
            process.kill(pid, signal);
          } catch {
            // exited meanwhile
          }
        }
      }
      const exit = await exited;
      await assertNoneLeft(marker);
      // What the last of them printed, read to the end (bounded: a pipe held elsewhere must not hang the test).
      await Promise.race([outputEnded, new Promise((r) => setTimeout(r, 1000))]);
      return exit;
    },
    processes: () => processesWith(marker),
    pids() {
      const find = (part: string) => {
        const pid = processesWith(marker).find(
          (p) => commandLine(p).includes(part) && !/^(unshare|npm|sh) /.test(commandLine(p)),
        );
        if (pid === undefined) throw new Error(`no process running ${part}`);
        return pid;
      };
      return { launcher: find('bin/herald'), server: find('src/main.ts') };
    },
  };
}
