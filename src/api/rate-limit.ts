/**
 * Per-key rate limits: ingest and management have separate budgets, each a token bucket per API key
 * holding two seconds' worth of requests. Beyond it: 429 rate_limited with Retry-After (whole seconds, at least 1).
 * The portal links of one instance share one bucket: making more links never buys more requests.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import type { Principal } from './principal.ts';
import { rateLimited } from './refusals.ts';
import { TokenBuckets } from './token-bucket.ts';

export interface RateLimits {
  /** Requests per second per key on POST …/events, …/events/batch and the engine endpoints; 0 = no limit. */
  ingest: number;
  /** Requests per second per key on every other authenticated route; 0 = no limit. */
  management: number;
}

const BURST_SECONDS = 2;

/**
 * Publishing routes, on the ingest budget: Herald's own and the engine's webhook (a session that reconnects replays
 * its backlog in a burst). Every other authenticated route is on the management one.
 */
export const isIngestRoute = (url: string): boolean =>
  /\/(events(\/batch)?|engine\/waha|engine\/evolution(\/:event)?)$/.test(url);

export function installRateLimit(app: FastifyInstance, limits: RateLimits, clock: Clock): void {
  const buckets = (rate: number) => (rate > 0 ? new TokenBuckets(rate, rate * BURST_SECONDS) : null);
  const ingest = buckets(limits.ingest);
  const management = buckets(limits.management);
  // Runs after authentication (registered later), so the principal is known and unauthenticated calls are 401s.
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.public || !request.principal) return;
    const isIngest = isIngestRoute(request.routeOptions.url ?? '');
    const limiter = isIngest ? ingest : management;
    if (!limiter) return;
    const waitMs = limiter.take(bucketOf(request.principal), clock());
    if (waitMs === 0) return;
    const rate = isIngest ? limits.ingest : limits.management;
    reply.header('retry-after', String(Math.max(1, Math.ceil(waitMs / 1000))));
    throw rateLimited(rate, isIngest ? 'ingest' : 'management');
  });
}

/** Whose budget a request draws on: the admin's, its key's, or its instance's links'. */
function bucketOf(p: Principal): string {
  if (p.kind === 'admin') return 'admin';
  return p.kind === 'instance' ? p.key_id : `links:${p.instance_id}`;
}
