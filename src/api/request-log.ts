/**
 * One log line per request, written when the answer has gone: method, path (credentials redacted), status and time.
 * Fastify's own request logging (two lines per request) is off. What would drown the rest is logged at `debug`
 * only: health probes, the session page's files, and the page's background refreshes (it marks them with
 * `x-herald-poll`) when they are reads that succeeded, so that with the page open the log still shows what people
 * and engines did; a change or a failure is never hidden by the mark.
 */
import { type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, LogController } from 'fastify';
import { redactHeaders } from '../domain/redact-headers.ts';
import { redactUrl, type SecretTest } from '../domain/redact-url.ts';
import { hashKey } from './auth.ts';

/** The header the session page sends with the requests of its periodic refresh. */
export const POLL_HEADER = 'x-herald-poll';

const QUIET_PATHS = /^\/(healthz|readyz)(\?|$)|^\/src\/|^\/favicon/;

function quiet(request: FastifyRequest, status: number): boolean {
  if (QUIET_PATHS.test(request.url)) return true;
  return (
    request.headers[POLL_HEADER] !== undefined && request.method === 'GET' && status >= 200 && status < 300
  );
}

/** Turns off Fastify's own two lines per request; installRequestLog writes the one line instead. */
export const requestLogController = () => new LogController({ disableRequestLogging: true });

/**
 * The Fastify options every Herald server shares (the API, and a worker's health server): its logger, the request
 * log's own line instead of Fastify's, and who the client is: X-Forwarded-For counts only behind the proxies
 * TRUST_PROXY names.
 */
export const serverBase = (logger: FastifyBaseLogger, trustProxy: string[]) => ({
  loggerInstance: logger,
  logController: requestLogController(),
  trustProxy: trustProxy.length > 0 ? trustProxy : false,
});

/**
 * The request line, and, for every line a request logs, its `url` and `headers` fields redacted: Herald's own
 * credentials (and the admin key, known by `adminKeyHash` alone; at least 16 characters) never reach the log.
 */
export function installRequestLog(app: FastifyInstance, adminKeyHash = ''): void {
  const isAdminKey: SecretTest = (text) => text.length >= 16 && hashKey(text) === adminKeyHash;
  const cleanUrls = new CleanUrls((url) => redactUrl(url, isAdminKey));
  const redacting = {
    url: (url: unknown) => (typeof url === 'string' ? cleanUrls.shown(url) : url),
    headers: (headers: unknown) =>
      typeof headers === 'object' && headers !== null
        ? redactHeaders(headers as Record<string, unknown>, isAdminKey)
        : headers,
  };
  // The serializers go on one child of each logger that requests descend from, not on each request's own: a child
  // given serializers copies its parent's and builds its formatters anew, and a request's child only adds its id.
  const bases = new WeakMap<FastifyBaseLogger, FastifyBaseLogger>();
  app.setChildLoggerFactory((logger, bindings, options) => {
    let base = bases.get(logger);
    if (!base) {
      base = logger.child({}, { serializers: redacting });
      bases.set(logger, base);
    }
    if (options.serializers) {
      return base.child(bindings, { ...options, serializers: { ...options.serializers, ...redacting } });
    }
    return Object.keys(options).length === 0 ? base.child(bindings) : base.child(bindings, options);
  });
  app.addHook('onResponse', async (request, reply) => {
    const url = cleanUrls.shown(request.url);
    const ms = Math.round(reply.elapsedTime);
    const line = { method: request.method, url, status: reply.statusCode, ms };
    const message = `${request.method} ${url} ${reply.statusCode} ${ms} ms`;
    if (quiet(request, reply.statusCode)) request.log.debug(line, message);
    else request.log.info(line, message);
  });
}

/**
 * URLs the log showed as they are, remembered (a few hundred): an engine posts to the same instance's URL again and
 * again, and telling that it holds no credential hashes its long segments. Only what a log line shows whole is
 * kept, so nothing is held that the log does not already hold.
 */
class CleanUrls {
  static readonly MAX = 512;
  readonly #redact: (url: string) => string;
  readonly #clean = new Set<string>();

  constructor(redact: (url: string) => string) {
    this.#redact = redact;
  }

  shown(url: string): string {
    if (this.#clean.has(url)) return url;
    const shown = this.#redact(url);
    if (shown === url) {
      if (this.#clean.size >= CleanUrls.MAX) this.#clean.clear();
      this.#clean.add(url);
    }
    return shown;
  }
}
