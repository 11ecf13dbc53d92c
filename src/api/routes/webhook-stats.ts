/**
 * A webhook's delivery health per UTC hour, for the charts of the session page and the portal: deliveries delivered
 * and failed, failed attempts retried, and answer times (webhook-stats.ts counts; the store reads the window's
 * attempts).
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HOUR_MS } from '../../domain/health.ts';
import {
  DEFAULT_STATS_HOURS,
  firstStatsHour,
  MAX_STATS_HOURS,
  webhookStats,
} from '../../domain/webhook-stats.ts';
import type { ApiContext } from '../context.ts';
import { Ok } from '../schemas.ts';
import { loadInstanceWebhook, WEBHOOK_ERRORS, WebhookParams } from './webhooks.ts';

const StatsQuery = Type.Object(
  {
    hours: Type.Optional(
      Type.String({
        // 1 to 168, without leading zeros.
        pattern: '^(?:[1-9]|[1-9]\\d|1[0-5]\\d|16[0-8])$',
        description: `an integer from 1 to ${MAX_STATS_HOURS}; default ${DEFAULT_STATS_HOURS}`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Ms = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
  description: 'milliseconds; null when no attempt of the hour was answered',
});
const Bucket = Type.Object(
  {
    start: Type.String({ format: 'date-time', description: 'the hour’s start (UTC)' }),
    delivered: Type.Integer({ description: 'deliveries whose last attempt ended in the hour, delivered' }),
    failed: Type.Integer({ description: 'deliveries whose last attempt ended in the hour, failed' }),
    retried_attempts: Type.Integer({
      description: 'attempts started in the hour that failed and were retried',
    }),
    p50_ms: Ms,
    p95_ms: Ms,
  },
  {
    examples: [
      {
        start: '2026-11-21T10:00:00.000Z',
        delivered: 41,
        failed: 1,
        retried_attempts: 3,
        p50_ms: 84,
        p95_ms: 310,
      },
    ],
  },
);

export function webhookStatsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get(
    '/instances/:instance_id/webhooks/:webhook_id/stats',
    {
      schema: {
        tags: ['webhooks'],
        description:
          'The last `hours` hours (default 24), oldest first, each starting on a UTC hour, the last the present ' +
          'one. A delivery counts in the hour its last attempt ended; an attempt in the hour it started. ' +
          'Answer times are over the attempts that were answered (an HTTP status or a broker’s acknowledgement).',
        params: WebhookParams,
        querystring: StatsQuery,
        response: {
          200: Ok(
            { buckets: Type.Array(Bucket) },
            { description: 'One bucket per hour, oldest first, the last the present hour' },
          ),
        },
        errors: [...WEBHOOK_ERRORS, 'invalid_stats_hours'],
      },
    },
    async (request) => {
      const webhook = await loadInstanceWebhook(ctx, request);
      const q = request.query as Static<typeof StatsQuery>;
      const hours = q.hours ? Number(q.hours) : DEFAULT_STATS_HOURS;
      const now = ctx.clock();
      // From an hour earlier: an attempt that started then may have ended, and its delivery with it, in the window.
      const attempts = await ctx.store.health.attemptsSince(
        webhook.webhook_id,
        firstStatsHour(now, hours) - HOUR_MS,
      );
      const buckets = webhookStats(attempts, hours, now).map((b) => ({
        ...b,
        start: new Date(b.start).toISOString(),
      }));
      return { success: true, buckets };
    },
  );
}
