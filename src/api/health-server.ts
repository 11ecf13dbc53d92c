/** The HTTP listener of a worker process: only /healthz and /readyz (SPEC §11), no API and no key. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ApiContext } from './context.ts';
import { installErrorHandling } from './errors.ts';
import { healthRoutes } from './routes/health.ts';

export async function buildHealthServer(
  ctx: Pick<ApiContext, 'store'>,
  logger: FastifyBaseLogger,
): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: logger });
  installErrorHandling(app);
  healthRoutes(app, ctx);
  return app;
}
