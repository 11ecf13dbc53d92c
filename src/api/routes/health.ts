/** Liveness and readiness (SPEC §11): public, for load balancers and orchestrators. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';

export function healthRoutes(app: FastifyInstance, ctx: Pick<ApiContext, 'store'>): void {
  const config = { public: true };
  const answer = (status: string, description: string) => ({
    200: Type.Object({ success: Type.Literal(true), status: Type.Literal(status) }, { description }),
  });
  app.get(
    '/healthz',
    { config, schema: { tags: ['operations'], response: answer('ok', 'The process answers') } },
    async () => ({
      success: true,
      status: 'ok',
    }),
  );
  const readyz = {
    tags: ['operations'],
    response: answer('ready', 'The database answers: this process can serve'),
    errors: ['database_unreachable' as const],
  };
  app.get('/readyz', { config, schema: readyz }, async () => {
    try {
      await ctx.store.ping();
    } catch {
      throw new HttpError('internal', 'database is not reachable');
    }
    return { success: true, status: 'ready' };
  });
}
