/** Liveness and readiness (SPEC §11): public, for load balancers and orchestrators. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';

export function healthRoutes(app: FastifyInstance, ctx: Pick<ApiContext, 'store'>): void {
  const config = { public: true };
  const answer = (status: string) => ({
    200: Type.Object({ success: Type.Literal(true), status: Type.Literal(status) }),
  });
  app.get('/healthz', { config, schema: { tags: ['operations'], response: answer('ok') } }, async () => ({
    success: true,
    status: 'ok',
  }));
  app.get('/readyz', { config, schema: { tags: ['operations'], response: answer('ready') } }, async () => {
    try {
      await ctx.store.ping();
    } catch {
      throw new HttpError('internal', 'database is not reachable');
    }
    return { success: true, status: 'ready' };
  });
}
