/**
 * The HTTP listener of a worker process: /healthz and /readyz, and /metrics with the admin key, since
 * the deliveries, attempts and in-flight figures are the worker's own. No API.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { installAuth } from './auth.ts';
import type { ApiContext } from './context.ts';
import { installErrorHandling } from './errors.ts';
import { installRequestLog, serverBase } from './request-log.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { ErrorResponse } from './schemas.ts';

export async function buildHealthServer(
  ctx: Pick<ApiContext, 'store' | 'availability' | 'metrics' | 'clock' | 'config'>,
  logger: FastifyBaseLogger,
  adminKeyHash: string,
): Promise<FastifyInstance> {
  const app = Fastify(serverBase(logger, ctx.config.trustProxy));
  // The admin key is known by its hash: with it, the log hides it wherever it stands in a logged URL, as the API's.
  installRequestLog(app, adminKeyHash);
  app.addSchema(ErrorResponse);
  installErrorHandling(app);
  installAuth(app, ctx.store, adminKeyHash, ctx.clock, { failuresPerMinute: ctx.config.authFailuresPerMin });
  healthRoutes(app, ctx);
  metricsRoutes(app, ctx);
  return app;
}
