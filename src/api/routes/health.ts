/** Liveness and readiness (SPEC §11): public, for load balancers and orchestrators. */
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';

export function healthRoutes(app: FastifyInstance, ctx: Pick<ApiContext, 'store'>): void {
  const config = { public: true };
  app.get('/healthz', { config, schema: { tags: ['operations'] } }, async () => ({
    success: true,
    status: 'ok',
  }));
  app.get('/readyz', { config, schema: { tags: ['operations'] } }, async () => {
    try {
      await ctx.store.ping();
    } catch {
      throw new HttpError('internal', 'database is not reachable');
    }
    return { success: true, status: 'ready' };
  });
}
