/**
 * The work channel's listening connection. The driver's own listen() re-listens after its connection closes, but
 * only once: when the database still refuses connections then, the channel is dropped for good and the process
 * is never woken again. This one keeps trying until LISTEN succeeds, and wakes the listeners each time it does
 * (notifications sent while it was away are lost; a wake-up makes the dispatcher look for itself).
 *
 * One listener of the channel leads: it holds a session advisory lock on this connection, so the lead ends with the
 * connection (a process that dies or loses the database hands it on). A notification of new work (an empty
 * payload) wakes the lead's dispatcher only; every other process wakes only its media jobs, and its dispatcher
 * keeps its own rounds (results coming back, due times, at most a second apart). With N workers woken for the same
 * trickle, each made its own small claim, a durable commit each: claims grew with the workers. When the lead's
 * claim comes back full (more may be due than one claim takes), it sends OVERFLOW, which wakes every dispatcher
 * (claim/postgres.ts).
 * The others try for the lead every LEAD_RETRY_MS.
 */
import type { Work } from '../records.ts';
import { connect, type Pool } from './connection.ts';

/** Between tries of LISTEN while the database is away. */
const RETRY_MS = 250;
/** Between a follower's tries for the lead: at most this long without a lead after the lead's process is gone. */
const LEAD_RETRY_MS = 1000;
/** First key of the lead's advisory lock (the second is the channel's hash: one lead per schema). */
const LEAD_LOCK = 0x4c454144; // "LEAD"
/** The payload that wakes every dispatcher, not only the lead's. */
export const OVERFLOW = 'overflow';

export class WorkListener {
  readonly #sql: Pool;
  readonly #channel: string;
  readonly #wakes: ((work?: Work) => void)[] = [];
  /** The loop that (re)issues LISTEN, while one runs. */
  #listening: Promise<void> | null = null;
  #leading = false;
  #leadTimer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(url: string, channel: string) {
    this.#channel = channel;
    const notified = (name: string, payload: string) => {
      if (name !== channel) return;
      const work = this.#leading || payload === OVERFLOW ? undefined : 'media';
      for (const wake of this.#wakes) wake(work);
    };
    this.#sql = connect(url, {
      max: 1,
      idle_timeout: null as unknown as number,
      max_lifetime: null,
      // Every close of the connection, including each refused reconnection: its session lock, the lead, is gone.
      onclose: () => {
        this.#leading = false;
        if (!this.#closed) void this.#relisten();
      },
      // The driver's hook for NOTIFY on this pool's connection (not in its type declarations).
      ...{ onnotify: notified },
    });
  }

  /** Whether this process leads: its dispatcher alone answers notifications of new work. */
  get leading(): boolean {
    return this.#leading;
  }

  /** Resolves once the channel is listened to (the first time: start-up fails when the database is away). */
  async listen(wake: (work?: Work) => void): Promise<void> {
    this.#wakes.push(wake);
    if (this.#wakes.length === 1) await this.#listen();
    wake();
  }

  /** LISTEN, then a try for the lead; its callers wake the listeners once it is done. */
  async #listen(): Promise<void> {
    await this.#sql.unsafe(`LISTEN "${this.#channel.replaceAll('"', '""')}"`);
    await this.#tryLead();
  }

  /** Takes the lead if nobody holds it; a follower tries again every LEAD_RETRY_MS. */
  async #tryLead(): Promise<void> {
    if (this.#leadTimer) clearTimeout(this.#leadTimer);
    this.#leadTimer = null;
    const [{ lead }] = await this.#sql<{ lead: boolean }[]>`
      SELECT pg_try_advisory_lock(${LEAD_LOCK}::integer, hashtext(${this.#channel})) AS lead`;
    if (this.#closed) return;
    this.#leading = lead;
    if (!lead)
      this.#leadTimer = setTimeout(() => {
        this.#tryLead().then(
          // The lead taken over: what came while nobody led is looked for at once.
          () => {
            if (this.#leading) for (const wake of this.#wakes) wake();
          },
          () => {}, // a lost connection: onclose relistens, and tries again
        );
      }, LEAD_RETRY_MS).unref();
  }

  #relisten(): Promise<void> {
    this.#listening ??= (async () => {
      while (!this.#closed) {
        try {
          await this.#listen();
          for (const wake of this.#wakes) wake();
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
      this.#listening = null;
    })();
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#leadTimer) clearTimeout(this.#leadTimer);
    await this.#sql.end({ timeout: 5 });
  }
}
