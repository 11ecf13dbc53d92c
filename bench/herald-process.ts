/**
 * Herald under test, in a child process of its own: the same composition root as `herald serve` (src/app.ts),
 * configured by environment variables, on a temp DATA_DIR (SQLite) or on DATABASE_URL (PostgreSQL).
 * Started with `no-dispatch`, it stops its dispatcher before taking any work: events are acknowledged and their
 * deliveries stay pending until a normal Herald is started on the same data (the W4 backlog).
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { V8_FLAGS } from '../bin/v8-flags.js';
import { type Herald, type Role, startHerald } from '../src/app.ts';
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
  /** Count the dispatcher's calls into the store (storeCalls): W-order's claims per second. */
  countStoreCalls?: boolean;
}

/**
 * The dispatcher's calls into the store, counted in the Herald process by wrapping the store's methods (nothing of
 * Herald's own changes). `claimGapsMs`: for each claim that took something, the time since the last outcome write
 * ended (at most the last 100,000).
 */
export interface StoreCalls {
  claims: number;
  /** Claims that took nothing. */
  emptyClaims: number;
  claimed: number;
  outcomeWrites: number;
  outcomes: number;
  claimGapsMs: number[];
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
      [o.dispatch ? 'dispatch' : 'no-dispatch', o.role ?? 'all', o.countStoreCalls ? 'count' : ''],
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

  /** What the dispatcher asked of the store so far, when started with `countStoreCalls`; counts from zero again. */
  async storeCalls(): Promise<StoreCalls> {
    return this.#child.call<StoreCalls>('storeCalls');
  }

  /** Closes Herald as SIGTERM would (in-flight attempts finish or are released), then ends the process. */
  async stop(): Promise<void> {
    await this.#child.call('close').catch(() => {});
    await this.#child.stop();
  }
}

/** Wraps the store's claim and outcome methods (the dispatcher reads them at each call) to count them. */
function countStoreCalls(store: Herald['store']): () => StoreCalls {
  let calls: StoreCalls;
  let lastWriteAt = 0;
  const reset = () => {
    calls = { claims: 0, emptyClaims: 0, claimed: 0, outcomeWrites: 0, outcomes: 0, claimGapsMs: [] };
  };
  reset();
  const { claims, outcomes } = store;
  const claimDue = claims.claimDue.bind(claims);
  claims.claimDue = async (...args) => {
    const got = await claimDue(...args);
    calls.claims++;
    calls.claimed += got.length;
    if (got.length === 0) calls.emptyClaims++;
    else if (lastWriteAt > 0 && calls.claimGapsMs.length < 100_000)
      calls.claimGapsMs.push(performance.now() - lastWriteAt);
    return got;
  };
  const recordAttempts = outcomes.recordAttempts.bind(outcomes);
  outcomes.recordAttempts = async (results, now) => {
    await recordAttempts(results, now);
    calls.outcomeWrites++;
    calls.outcomes += results.length;
    lastWriteAt = performance.now();
  };
  return () => {
    const result = calls;
    reset();
    return result;
  };
}

async function main(dispatch: boolean, role: Role, count: boolean): Promise<void> {
  let herald: Awaited<ReturnType<typeof startHerald>>;
  try {
    herald = await startHerald(loadConfig(process.env), { role });
  } catch (err) {
    serveParent({ error: (err as Error).message }, {});
    return;
  }
  if (!dispatch) await herald.dispatcher.stop();
  const storeCalls = count ? countStoreCalls(herald.store) : null;
  serveParent(
    { url: herald.url },
    {
      peakRss: () => process.resourceUsage().maxRSS * 1024,
      storeCalls: () => {
        if (!storeCalls) throw new Error('storeCalls: Herald was started without countStoreCalls');
        return storeCalls();
      },
      close: async () => {
        await herald.close();
        // Let the reply go out, then exit (which writes the CPU profile when one was asked for).
        setImmediate(() => process.exit(0));
      },
    },
  );
}

if (import.meta.main)
  await main(process.argv[2] === 'dispatch', process.argv[3] as Role, process.argv[4] === 'count');
