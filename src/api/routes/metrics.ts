/**
 * GET /metrics: Prometheus text. It needs the admin key (rights.ts): the metrics span every instance (webhook ids
 * of all of them appear), so anyone else gets a 403. Prometheus sends it with `authorization: { credentials }`.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';

export function metricsRoutes(app: FastifyInstance, ctx: Pick<ApiContext, 'metrics'>): void {
  const metrics = ctx.metrics;
  if (!metrics) return;
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        description:
          'Prometheus text format 0.0.4: herald_events_ingested_total{event}, herald_deliveries_total{outcome}, ' +
          'herald_attempts_total{result}, herald_attempt_duration_seconds, herald_queue_depth, herald_queue_due, ' +
          'herald_queue_oldest_due_age_seconds, herald_in_flight_attempts, herald_in_flight_attempts_by_webhook{webhook_id}, ' +
          'and the process_* / nodejs_* defaults.',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'The metrics, one sample per line' }) },
      },
    },
    async (_request, reply) => {
      return reply.type(metrics.contentType()).send(await metrics.text());
    },
  );
}
