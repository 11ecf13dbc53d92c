/**
 * Herald under test, in a child process of its own: the same composition root as `herald serve` (src/app.ts),
 * configured by environment variables, on a temp DATA_DIR (SQLite) or on DATABASE_URL (PostgreSQL).
 * Started with `no-dispatch`, it stops its dispatcher before taking any work: events are acknowledged and their
 * deliveries stay pending until a normal Herald is started on the same data (the W4 backlog).
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { V8_FLAGS } from '../bin/v8-flags.js';
import { type Role, startHerald } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { Child, serveParent } from './ipc.ts';

export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

export interface HeraldProcessOptions {
  dataDir: string;
  databaseUrl: string | null;
  dispatch: boolean;
  /** Write a CPU profile (node --cpu-prof) of the Herald process into this directory when it exits. */
  profileDir?: string;
  /** `serve --role`: all (default), api or worker; the split needs PostgreSQL. */
  role?: Role;
  /** Run it in this network namespace (`ip netns exec`), as if on a host of its own. */
  netns?: string;
  /**
   * More environment, after the bench's own (e.g. SECRET_KEY, shared by processes of one database; EM's
   * ENGINE_MEDIA_HEADERS, the file server's key).
   */
  env?: Record<string, string>;
}

export class HeraldProcess {
  readonly #child: Child;
  url = '';

  private constructor(child: Child) {
    this.#child = child;
  }

  static async start(o: HeraldProcessOptions): Promise<HeraldProcess> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: o.dataDir,
      ADMIN_API_KEY: ADMIN_KEY,
      // Receivers, and EM's engine file server, listen on 127.0.0.1: deliveries and media downloads go there.
      ALLOW_PRIVATE_DESTINATIONS: 'true',
      // The workloads publish faster than the default per-key budgets allow on purpose.
      RATE_LIMIT_INGEST: '0',
      RATE_LIMIT_MANAGEMENT: '0',
      ...o.env,
    };
    if (o.databaseUrl) env.DATABASE_URL = o.databaseUrl;
    else delete env.DATABASE_URL;
    const profile = o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : [];
    // The flags `npm start` gives Herald (the launcher's): measured as it runs, and they cannot drift.
    const execArgv = [...V8_FLAGS, ...profile];
    // Its log as `npm start` writes it (LOG_LEVEL info unless the bench's own environment sets one: a line per
    // request), into a file of the run's data, as a supervisor would keep it: the figures include logging.
    const log = openSync(join(o.dataDir, 'herald.log'), 'a', 0o600);
    const child = new Child(
      import.meta.filename,
      [o.dispatch ? 'dispatch' : 'no-dispatch', o.role ?? 'all'],
      {
        env,
        execArgv,
        prefix: o.netns ? ['ip', 'netns', 'exec', o.netns] : undefined,
        stdout: log,
      },
    );
    closeSync(log);
    const ready = (await child.ready) as { url?: string; error?: string };
    if (ready.error) {
      await child.stop();
      throw new Error(`Herald refused to start: ${ready.error}`);
    }
    const herald = new HeraldProcess(child);
    herald.url = ready.url as string;
    return herald;
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Peak resident set size of the Herald process so far, in bytes. */
  async peakRss(): Promise<number> {
    return this.#child.call<number>('peakRss');
  }

  /** Closes Herald as SIGTERM would (in-flight attempts finish or are released), then ends the process. */
  async stop(): Promise<void> {
    await this.#child.call('close').catch(() => {});
    await this.#child.stop();
  }
}

async function main(dispatch: boolean, role: Role): Promise<void> {
  let herald: Awaited<ReturnType<typeof startHerald>>;
  try {
    herald = await startHerald(loadConfig(process.env), { role });
  } catch (err) {
    serveParent({ error: (err as Error).message }, {});
    return;
  }
  if (!dispatch) await herald.dispatcher.stop();
  serveParent(
    { url: herald.url },
    {
      peakRss: () => process.resourceUsage().maxRSS * 1024,
      close: async () => {
        await herald.close();
        // Let the reply go out, then exit (which writes the CPU profile when one was asked for).
        setImmediate(() => process.exit(0));
      },
    },
  );
}

if (import.meta.main) await main(process.argv[2] === 'dispatch', process.argv[3] as Role);
