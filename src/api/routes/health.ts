/** Liveness and readiness: public, for load balancers and orchestrators. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Readiness } from '../../store/availability.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';

export function healthRoutes(app: FastifyInstance, ctx: Pick<ApiContext, 'availability'>): void {
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
    description:
      'Ready when the database answers. After a write failed for a reason of the database (connection lost, ' +
      'disk full), not ready (503) until no call has failed for 2 seconds and the database takes a write again, ' +
      'which this probe tries itself.',
    response: answer('ready', 'The database answers: this process can serve'),
    errors: ['database_unavailable' as const],
  };
  app.get('/readyz', { config, schema: readyz }, async (request) => {
    let readiness: Readiness;
    try {
      readiness = await ctx.availability.check();
    } catch (err) {
      // Not a failure the store recognises (a closed store, say): not ready all the same.
      request.log.error({ err }, 'not ready: the readiness check failed');
      throw HttpError.unavailable();
    }
    if (!readiness.ready) {
      request.log.warn(
        { reason: readiness.reason, since: readiness.since },
        'not ready: database unavailable',
      );
      throw HttpError.unavailable();
    }
    return { success: true, status: 'ready' };
  });
}
