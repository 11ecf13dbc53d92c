/**
 * Engine media jobs on SQLite. Claims are held in memory, as delivery leases are (leases.ts): one process owns the
 * database, and a restart finds every unsettled job due again.
 */

import { withSettledMedia } from '../../domain/event-body.ts';
import { randomToken } from '../../domain/ids.ts';
import type { MediaJobs } from '../ports.ts';
import type { MediaJob } from '../records.ts';
import { IN_CHAT_QUEUE, PROMOTE_HEAD } from '../sql-fragments.ts';
import type { SqliteDatabase } from '../sqlite/database.ts';

export class SqliteMediaJobs implements MediaJobs {
  readonly #db: SqliteDatabase;
  /** event_id → the lease of the claim that holds it. */
  readonly #held = new Map<string, { token: string; until: number }>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  async claimMediaJobs(now: number, limit: number, leaseMs: number): Promise<MediaJob[]> {
    const rows = this.#db
      .q(
        `SELECT j.event_id, e.instance_id, j.url, j.mimetype, j.filename, j.engine_error, j.via_engine, j.tries,
           i.engine_media_prefix
         FROM media_jobs j JOIN events e ON e.event_id = j.event_id JOIN instances i ON i.instance_id = e.instance_id
         WHERE j.next_try_at <= ? ORDER BY j.next_try_at LIMIT ?`,
      )
      .all(now, limit + this.#held.size)
      .map((r) => ({ ...r, via_engine: r.via_engine === 1 })) as unknown as Omit<MediaJob, 'lease_token'>[];
    const token = randomToken(12);
    const jobs: MediaJob[] = [];
    for (const row of rows) {
      if (jobs.length === limit) break;
      const lease = this.#held.get(row.event_id);
      if (lease && lease.until > now) continue;
      this.#held.set(row.event_id, { token, until: now + leaseMs });
      jobs.push({ ...row, lease_token: token });
    }
    return jobs;
  }

  /** Its flush is shared with the commits around it: one fsync per download held the media path near 200/s. */
  async settleMediaJob(
    job: MediaJob,
    media: Record<string, unknown>,
    now: number,
    failure: string | null = null,
  ): Promise<boolean> {
    if (!this.#release(job)) return false;
    return this.#db.durableTx(() => {
      const row = this.#db.q('SELECT body FROM events WHERE event_id = ?').get(job.event_id);
      // Gone with its instance meanwhile: nothing is left to deliver.
      if (!row) return false;
      this.#db
        .q('UPDATE events SET body = ?, media_failure = ? WHERE event_id = ?')
        .run(withSettledMedia(row.body as string, media), failure, job.event_id);
      // Due now, but one in a chat's queue only as its chat's head (once the job is gone).
      this.#db
        .q(
          `UPDATE deliveries SET next_attempt_at = ?
           WHERE event_id = ? AND status = 'pending' AND next_attempt_at IS NULL AND NOT (${IN_CHAT_QUEUE})`,
        )
        .run(now, job.event_id);
      this.#db.q('DELETE FROM media_jobs WHERE event_id = ?').run(job.event_id);
      const queued = this.#db
        .q(
          `SELECT webhook_id, chat FROM deliveries WHERE event_id = ? AND status = 'pending' AND ${IN_CHAT_QUEUE}`,
        )
        .all(job.event_id);
      const promote = this.#db.q(PROMOTE_HEAD('?1', '?2', '?3'));
      for (const q of queued) promote.run(now, q.webhook_id, q.chat);
      this.#db.notifyWork();
      return true;
    });
  }

  async retryMediaJob(job: MediaJob, at: number): Promise<void> {
    if (!this.#release(job)) return;
    this.#db
      .q('UPDATE media_jobs SET tries = tries + 1, next_try_at = ? WHERE event_id = ?')
      .run(at, job.event_id);
  }

  /** Ends the job's lease; false when another claim holds it now. */
  #release(job: MediaJob): boolean {
    if (this.#held.get(job.event_id)?.token !== job.lease_token) return false;
    this.#held.delete(job.event_id);
    return true;
  }
}
