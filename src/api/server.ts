/** Builds the HTTP API: JSON parsing, errors, auth, OpenAPI, then the routes. */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { installPublishSpans } from '../telemetry/publish-span.ts';
import { uiRoutes } from '../ui/routes.ts';
import { installAuth } from './auth.ts';
import { installBodyBudget } from './body-budget.ts';
import type { ApiContext } from './context.ts';
import { installApiDocs } from './docs.ts';
import { engineJwtAuth } from './engine-jwt-auth.ts';
import { errorBody, installErrorHandling } from './errors.ts';
import { installJsonBody } from './json-body.ts';
import { installRateLimit } from './rate-limit.ts';
import { installRequestLog, serverBase } from './request-log.ts';
import { installRightsTable } from './rights.ts';
import { deliveryRoutes } from './routes/deliveries.ts';
import { engineRoutes } from './routes/engine.ts';
import { evolutionRoutes } from './routes/engine-evolution.ts';
import { eventRoutes } from './routes/events.ts';
import { healthRoutes } from './routes/health.ts';
import { instanceRoutes } from './routes/instances.ts';
import { mediaRoutes } from './routes/media.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { portalLinkRoutes } from './routes/portal-links.ts';
import { sourceRoutes } from './routes/sources.ts';
import { testDeliveryRoutes } from './routes/test-delivery.ts';
import { webhookStatsRoutes } from './routes/webhook-stats.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { SHARED_SCHEMAS } from './schemas.ts';
import { installUnreadBodyClose } from './unread-body.ts';

export const VERSION = '0.1.0';

export async function buildServer(
  ctx: ApiContext,
  logger: FastifyBaseLogger,
  adminKeyHash: string,
): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverBase(logger, ctx.config.trustProxy),
    bodyLimit: 256 * 1024,
    // maxParamLength: longer than any id, so an overlong one reaches schema validation and gets a 400 naming it.
    // `/instances/` is `/instances`: a trailing slash names the same resource, never an empty id.
    // `//` is `/`: Evolution joins its webhook url and an event's path with a `/` of its own (`…/evolution//messages-upsert`).
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // Errors of the router itself (a badly encoded path) get the same JSON shape as every other error.
    frameworkErrors: (err, _request, reply) => {
      (reply as FastifyReply).status(400).send(errorBody('invalid_request', `path: ${err.message}`));
    },
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: true,
        // Errors carry their schema, so a pattern's description can state the rule instead of the regex.
        verbose: true,
      },
    },
  });
  installRequestLog(app, adminKeyHash);
  // First: the span covers the whole request, the refusals before its body included.
  if (ctx.tracing) installPublishSpans(app, ctx.tracing);
  installJsonBody(app);
  installUnreadBodyClose(app);
  installErrorHandling(app);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  // Before any route: each one must have its right in the table.
  installRightsTable(app);
  await installApiDocs(app, { version: VERSION, publicUrl: ctx.publicUrl });
  installAuth(app, ctx.store, adminKeyHash, ctx.clock, {
    failuresPerMinute: ctx.config.authFailuresPerMin,
    engineJwt: engineJwtAuth(ctx),
  });
  installRateLimit(
    app,
    { ingest: ctx.config.rateLimitIngest, management: ctx.config.rateLimitManagement },
    ctx.clock,
  );
  installBodyBudget(app);
  healthRoutes(app, ctx);
  instanceRoutes(app, ctx);
  webhookRoutes(app, ctx);
  webhookStatsRoutes(app, ctx);
  eventRoutes(app, ctx);
  engineRoutes(app, ctx);
  evolutionRoutes(app, ctx);
  deliveryRoutes(app, ctx);
  mediaRoutes(app, ctx);
  testDeliveryRoutes(app, ctx);
  portalLinkRoutes(app, ctx);
  sourceRoutes(app, ctx);
  metricsRoutes(app, ctx);
  uiRoutes(app, VERSION, ctx.config.portal);
  return app;
}
