/**
 * A redis-server of the bench's own for the BullMQ baseline: on 127.0.0.1 and a free port (never the shared Redis
 * on 6379), with its data in a temp dir, configured as BullMQ's production guide says: AOF on, fsync every second,
 * no RDB snapshots. Stopped by its PID, its directory removed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

const START_TIMEOUT_MS = 10_000;

export class RedisServer {
  readonly port: number;
  readonly #process: ChildProcess;
  readonly #dir: string;

  private constructor(port: number, process: ChildProcess, dir: string) {
    this.port = port;
    this.#process = process;
    this.#dir = dir;
  }

  static async start(): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'herald-bench-redis-'));
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
    args.push('--appendonly', 'yes', '--appendfsync', 'everysec');
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const server = new RedisServer(port, child, dir);
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('did not start in time')), START_TIMEOUT_MS);
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`exited (${code})`)));
        child.stdout?.setEncoding('utf8').on('data', (s: string) => {
          output += s;
          if (output.includes('Ready to accept connections')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    } catch (err) {
      await server.stop();
      throw new Error(`redis-server ${args.join(' ')}: ${(err as Error).message}\n${output.slice(-2000)}`);
    }
    // Its log is not read after start; left unread, a full pipe would block the server.
    child.stdout?.resume();
    child.stderr?.resume();
    return server;
  }

  get pid(): number {
    return this.#process.pid as number;
  }

  async stop(): Promise<void> {
    const running = this.#process.exitCode === null && this.#process.signalCode === null;
    if (this.#process.pid !== undefined && running) {
      const exited = once(this.#process, 'exit');
      this.#process.kill('SIGTERM');
      await exited;
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
