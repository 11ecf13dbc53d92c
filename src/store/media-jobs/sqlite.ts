/**
 * Engine media jobs on SQLite. Claims are held in memory, as delivery leases are (leases.ts): one process owns the
 * database, and a restart finds every unsettled job due again.
 */

import { withSettledMedia } from '../../domain/event-body.ts';
import { randomToken } from '../../domain/ids.ts';
import type { MediaJobs } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { SqliteQueue } from '../queue/sqlite.ts';
import type { MediaJob } from '../records.ts';

export class SqliteMediaJobs extends QueueOperation<SqliteQueue> implements MediaJobs {
  /** event_id → the lease of the claim that holds it. */
  readonly #held = new Map<string, { token: string; until: number }>();

  async claimMediaJobs(now: number, limit: number, leaseMs: number): Promise<MediaJob[]> {
    const rows = this.db
      .q(
        `SELECT j.event_id, e.instance_id, j.url, j.mimetype, j.filename, j.engine_error, j.via_engine, j.tries,
           i.engine_media_prefix, e.trace_context
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
    return this.db.durableTx(() => {
      const row = this.db.q('SELECT body FROM events WHERE event_id = ?').get(job.event_id);
      // Gone with its instance meanwhile: nothing is left to deliver.
      if (!row) return false;
      this.db
        .q('UPDATE events SET body = ?, media_failure = ? WHERE event_id = ?')
        .run(withSettledMedia(row.body as string, media), failure, job.event_id);
      // The job gone, its deliveries due (one in a chat's queue only as its chat's head).
      this.queue.releaseHeld(job.event_id, now);
      return true;
    });
  }

  async retryMediaJob(job: MediaJob, at: number): Promise<void> {
    if (!this.#release(job)) return;
    this.db
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
