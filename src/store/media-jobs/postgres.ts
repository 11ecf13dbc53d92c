/**
 * Engine media jobs on PostgreSQL, shared by every worker: a claim leases jobs (`FOR UPDATE SKIP LOCKED`), so a
 * worker that dies mid-download leaves its jobs to the others once the lease runs out.
 */

import { withSettledMedia } from '../../domain/event-body.ts';
import { randomToken } from '../../domain/ids.ts';
import type { MediaJobs } from '../ports.ts';
import { QueueOperation } from '../queue/operation.ts';
import type { PostgresQueue } from '../queue/postgres.ts';
import type { MediaJob } from '../records.ts';

export class PostgresMediaJobs extends QueueOperation<PostgresQueue> implements MediaJobs {
  async claimMediaJobs(now: number, limit: number, leaseMs: number): Promise<MediaJob[]> {
    const token = randomToken(12);
    return this.db.tx(
      (sql) => sql<MediaJob[]>`
        WITH picked AS (
          SELECT event_id FROM media_jobs WHERE next_try_at <= ${now}::bigint
          ORDER BY next_try_at LIMIT ${limit}::integer FOR UPDATE SKIP LOCKED
        )
        UPDATE media_jobs j SET next_try_at = ${now + leaseMs}::bigint, lease_token = ${token}
        FROM picked, events e, instances i
        WHERE j.event_id = picked.event_id AND e.event_id = j.event_id AND i.instance_id = e.instance_id
        RETURNING j.event_id, e.instance_id, j.url, j.mimetype, j.filename, j.engine_error, j.via_engine, j.tries,
          j.lease_token, i.engine_media_prefix, e.trace_context`,
    );
  }

  async settleMediaJob(
    job: MediaJob,
    media: Record<string, unknown>,
    now: number,
    failure: string | null = null,
  ): Promise<boolean> {
    return this.db.tx(async (sql) => {
      const [row] = await sql<{ body: string }[]>`
        SELECT e.body FROM media_jobs j JOIN events e ON e.event_id = j.event_id
        WHERE j.event_id = ${job.event_id} AND j.lease_token = ${job.lease_token}
        FOR UPDATE OF j, e`;
      if (!row) return false;
      await sql`
        UPDATE events SET body = ${withSettledMedia(row.body, media)}, media_failure = ${failure}
        WHERE event_id = ${job.event_id}`;
      // The job gone, its deliveries due (one in a chat's queue only as its chat's head).
      await this.queue.releaseHeld(sql, job.event_id, now);
      return true;
    });
  }

  async retryMediaJob(job: MediaJob, at: number): Promise<void> {
    await this.db.sql`
      UPDATE media_jobs SET tries = tries + 1, next_try_at = ${at}::bigint, lease_token = NULL
      WHERE event_id = ${job.event_id} AND lease_token = ${job.lease_token}`;
  }
}
