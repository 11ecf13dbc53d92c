/**
 * Request/reply over a child process's IPC channel: the bench (parent) calls named commands of its children
 * (Herald, receivers, the raw baseline), each of which runs in its own process so that nothing it does shares
 * a thread with what is measured.
 */
import { type ChildProcess, spawn } from 'node:child_process';

type Handlers = Record<string, (arg: unknown) => unknown>;
type Reply = { id: number; result?: unknown; error?: string };

/** In the child: announce `ready` (any value), then answer { id, cmd, arg } messages with the handlers. */
export function serveParent(ready: unknown, handlers: Handlers): void {
  process.on('message', async (m: { id: number; cmd: string; arg: unknown }) => {
    try {
      const result = await handlers[m.cmd](m.arg);
      process.send?.({ id: m.id, result });
    } catch (err) {
      process.send?.({ id: m.id, error: (err as Error).message });
    }
  });
  // Without its parent there is nobody to report to: end, even if the parent died without closing us.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ id: 0, result: ready });
}

/** In the parent: a child started with `node <file> <args>` that answers calls. */
export class Child {
  readonly process: ChildProcess;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #next = 1;
  #exited: Error | null = null;
  readonly ready: Promise<unknown>;

  /**
   * `prefix`: a command that runs Node in another context and execs it, keeping the IPC descriptor and the PID
   * (`ip netns exec <name>`: the scale bench's workers on hosts of their own).
   */
  constructor(
    file: string,
    args: string[],
    options: { env?: NodeJS.ProcessEnv; execArgv?: string[]; prefix?: string[]; stdout?: number } = {},
  ) {
    // process.execPath: the children run on the same Node 24 as this process, whatever `node` is on PATH.
    const [command, ...words] = [...(options.prefix ?? []), process.execPath];
    this.process = spawn(command, [...words, ...(options.execArgv ?? []), file, ...args], {
      stdio: ['ignore', options.stdout ?? 'inherit', 'inherit', 'ipc'],
      env: options.env ?? process.env,
    });
    this.ready = new Promise((resolve, reject) => this.#pending.set(0, { resolve, reject }));
    this.process.on('message', (m: Reply) => {
      const waiter = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.error !== undefined) waiter?.reject(new Error(m.error));
      else waiter?.resolve(m.result);
    });
    this.process.on('exit', (code, signal) => {
      this.#exited = new Error(`${file} ${args.join(' ')} exited (${signal ?? code})`);
      for (const w of this.#pending.values()) w.reject(this.#exited);
      this.#pending.clear();
    });
  }

  /** For the CPU meter (bench/cpu.ts). */
  get pid(): number {
    return this.process.pid as number;
  }

  call<T>(cmd: string, arg?: unknown): Promise<T> {
    if (this.#exited) return Promise.reject(this.#exited);
    const id = this.#next++;
    const reply = new Promise<T>((resolve, reject) =>
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject }),
    );
    this.process.send({ id, cmd, arg });
    return reply;
  }

  /** Resolves once the process has exited; SIGKILL after `graceMs` if it has not. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    if (this.process.connected) this.process.disconnect();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}
