/**
 * The work channel's listening connection. The driver's own listen() re-listens after its connection closes, but
 * only once: when the database still refuses connections then, the channel is dropped for good and the process
 * is never woken again. This one keeps trying until LISTEN succeeds, and wakes the listeners each time it does
 * (notifications sent while it was away are lost; a wake-up makes the dispatcher look for itself).
 */
import { connect, type Pool } from './connection.ts';

/** Between tries of LISTEN while the database is away. */
const RETRY_MS = 250;

export class WorkListener {
  readonly #sql: Pool;
  readonly #channel: string;
  readonly #wakes: (() => void)[] = [];
  /** The loop that (re)issues LISTEN, while one runs. */
  #listening: Promise<void> | null = null;
  #closed = false;

  constructor(url: string, channel: string) {
    this.#channel = channel;
    const notified = (name: string) => {
      if (name === channel) for (const wake of this.#wakes) wake();
    };
    this.#sql = connect(url, {
      max: 1,
      idle_timeout: null as unknown as number,
      max_lifetime: null,
      // Every close of the connection, including each refused reconnection.
      onclose: () => {
        if (!this.#closed) void this.#relisten();
      },
      // The driver's hook for NOTIFY on this pool's connection (not in its type declarations).
      ...{ onnotify: notified },
    });
  }

  /** Resolves once the channel is listened to (the first time: start-up fails when the database is away). */
  async listen(wake: () => void): Promise<void> {
    this.#wakes.push(wake);
    if (this.#wakes.length === 1) await this.#listen();
    wake();
  }

  #listen(): Promise<unknown> {
    return this.#sql.unsafe(`LISTEN "${this.#channel.replaceAll('"', '""')}"`);
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
    await this.#sql.end({ timeout: 5 });
  }
}
