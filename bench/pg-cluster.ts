/**
 * A PostgreSQL cluster of the scale bench's own: initdb into a temp dir and a postmaster on a free port, with
 * pg_stat_statements preloaded (which needs a server start, so the shared PostgreSQL on 5432 is never touched),
 * listening on one address only, trusting connections from the bench's private subnet. Run as the `postgres` user
 * when the bench runs as root (PostgreSQL refuses root). Stopped by the postmaster's PID, its directory removed.
 */
import { type ChildProcess, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  appendFileSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from './free-port.ts';

const START_TIMEOUT_MS = 30_000;

/** The newest server installed under /usr/lib/postgresql (Debian's layout). */
function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql')
    .map(Number)
    .filter((v) => Number.isInteger(v))
    .sort((a, b) => b - a);
  if (versions.length === 0) throw new Error('no PostgreSQL server under /usr/lib/postgresql');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

/** uid/gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root, and there is no postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

export class PgCluster {
  readonly address: string;
  readonly port: number;
  readonly #server: ChildProcess;
  readonly #dir: string;

  private constructor(address: string, port: number, server: ChildProcess, dir: string) {
    this.address = address;
    this.port = port;
    this.#server = server;
    this.#dir = dir;
  }

  /** A fresh cluster listening on `address`, trusting `cidr`. */
  static async start(address: string, cidr: string): Promise<PgCluster> {
    const bin = binDir();
    const user = serverUser();
    const dir = mkdtempSync(join(tmpdir(), 'herald-scale-pg-'));
    const data = join(dir, 'data');
    mkdirSync(data);
    if ('uid' in user) {
      chownSync(dir, user.uid, user.gid);
      chownSync(data, user.uid, user.gid);
    }
    const as: SpawnOptions = { ...user, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] };
    try {
      // --no-sync: only initdb's own final flush is skipped; the server runs with fsync on, as in service.
      execFileSync(
        `${bin}/initdb`,
        ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync'],
        as,
      );
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`initdb: ${String((err as { stderr?: Buffer }).stderr ?? err)}`);
    }
    appendFileSync(join(data, 'pg_hba.conf'), `host all all ${cidr} trust\n`);
    const port = await freePort(address);
    const settings = {
      listen_addresses: address,
      unix_socket_directories: dir,
      shared_preload_libraries: 'pg_stat_statements',
      // BEGIN and COMMIT are statements of each transaction too (the default, said here because it is counted).
      'pg_stat_statements.track_utility': 'on',
      // An api process and 4 workers of at most 13 connections each, and the bench's own.
      max_connections: '200',
    };
    const args = [
      '-D',
      data,
      '-p',
      String(port),
      ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ];
    const server = spawn(`${bin}/postgres`, args, as);
    const cluster = new PgCluster(address, port, server, dir);
    let log = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('did not start in time')), START_TIMEOUT_MS);
        server.once('exit', (code) => reject(new Error(`exited (${code})`)));
        server.stderr?.setEncoding('utf8').on('data', (s: string) => {
          log += s;
          if (log.includes('database system is ready to accept connections')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    } catch (err) {
      await cluster.stop();
      throw new Error(`postgres ${args.join(' ')}: ${(err as Error).message}\n${log.slice(-2000)}`);
    }
    server.stdout?.resume();
    server.stderr?.removeAllListeners('data').resume();
    return cluster;
  }

  /** The postmaster: the server processes are it and its children (cpu.ts reads the tree). */
  get pid(): number {
    return this.#server.pid as number;
  }

  url(database: string, user = 'postgres'): string {
    return `postgres://${user}@${this.address}:${this.port}/${database}`;
  }

  /** A connection to `database` as the superuser, for set-up and statistics. */
  connect(database = 'postgres'): postgres.Sql {
    return postgres(this.url(database), { max: 1, onnotice: () => {} });
  }

  /** Fast shutdown (SIGINT: sessions ended, a clean checkpoint), then the directory goes. */
  async stop(): Promise<void> {
    const running = this.#server.exitCode === null && this.#server.signalCode === null;
    if (this.#server.pid !== undefined && running) {
      const exited = once(this.#server, 'exit');
      this.#server.kill('SIGINT');
      await exited;
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
