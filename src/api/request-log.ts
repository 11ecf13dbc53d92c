/**
 * One log line per request, written when the answer has gone: method, path (credentials redacted), status and time.
 * Fastify's own request logging (two lines per request) is off. What would drown the rest is logged at `debug`
 * only: health probes, the session page's files, and the page's background refreshes (it marks them with
 * `x-herald-poll`), so that with the page open the log still shows what people and engines did.
 */
import { type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { redactUrl } from '../domain/redact-url.ts';

/** The header the session page sends with the requests of its periodic refresh. */
export const POLL_HEADER = 'x-herald-poll';

const QUIET_PATHS = /^\/(healthz|readyz)(\?|$)|^\/src\/|^\/favicon/;

function quiet(request: FastifyRequest): boolean {
  return QUIET_PATHS.test(request.url) || request.headers[POLL_HEADER] !== undefined;
}

/** Turns off Fastify's own two lines per request; installRequestLog writes the one line instead. */
export const requestLogController = () => new LogController({ disableRequestLogging: true });

export function installRequestLog(app: FastifyInstance): void {
  app.addHook('onResponse', async (request, reply) => {
    const url = redactUrl(request.url);
    const ms = Math.round(reply.elapsedTime);
    const line = { method: request.method, url, status: reply.statusCode, ms };
    const message = `${request.method} ${url} ${reply.statusCode} ${ms} ms`;
    if (quiet(request)) request.log.debug(line, message);
    else request.log.info(line, message);
  });
}
