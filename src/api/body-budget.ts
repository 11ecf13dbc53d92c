/**
 * Bounds the memory that large request bodies take at once. A JSON body is held whole while it is read, then parsed,
 * checked and stored, and a 32 MiB batch peaks at several times its size: four at once took hundreds of MB that the
 * process kept. A body over `over` bytes (only a batch or the engine's webhook may be) first draws its declared
 * length from a budget shared by the process, and gives it back once answered. Past the budget a request waits, its
 * body unread (TCP holds the client back), in order of arrival; one that waited `maxWaitMs`, or is still waiting
 * when Herald stops, gets 503 unavailable with Retry-After.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ByteBudget } from './byte-budget.ts';
import { HttpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route reads its body as a stream and never holds it whole (media uploads): no budget needed. */
    streamsBody?: boolean;
  }
}

export interface BodyBudgetOptions {
  /** Bytes of large bodies held at once. */
  bytes: number;
  /** Bodies up to this size (every ordinary request) pass without drawing on the budget. */
  over: number;
  maxWaitMs: number;
}

/**
 * One batch of the largest size at a time (or several smaller ones): parsing runs on the one JavaScript thread
 * anyway, so two at once are hardly faster and take much more memory at the peak (BENCHMARKS.md).
 */
export const BODY_BUDGET: BodyBudgetOptions = {
  bytes: 32 * 1024 * 1024,
  over: 256 * 1024,
  maxWaitMs: 30_000,
};

const RETRY_AFTER_S = 5;

export function installBodyBudget(
  app: FastifyInstance,
  options: BodyBudgetOptions = BODY_BUDGET,
): ByteBudget {
  const budget = new ByteBudget(options.bytes);
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort(new Error('stopping')));

  app.addHook('preParsing', async (request, reply, payload) => {
    const size = bufferedSize(request);
    if (size <= options.over) return payload;
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort(new Error('client gone')));
    try {
      const release = await budget.acquire(
        size,
        AbortSignal.any([stopping.signal, gone.signal, AbortSignal.timeout(options.maxWaitMs)]),
      );
      reply.raw.once('close', release);
    } catch {
      reply.header('retry-after', String(RETRY_AFTER_S));
      throw new HttpError(
        'unavailable',
        stopping.signal.aborted
          ? 'Herald is stopping: the request was not read; send it again'
          : `Herald is busy reading other large bodies (${options.bytes} bytes at once); send it again`,
      );
    }
    return payload;
  });
  return budget;
}

/**
 * What the body will hold in memory: its Content-Length, or the route's limit when the length is not declared.
 * Zero when nothing is buffered: a streaming route, or a length over the limit (refused before a byte is read).
 */
function bufferedSize(request: FastifyRequest): number {
  if (request.routeOptions.config?.streamsBody) return 0;
  const limit = request.routeOptions.bodyLimit ?? 0;
  const header = request.headers['content-length'];
  if (header === undefined) return request.headers['transfer-encoding'] === undefined ? 0 : limit;
  const declared = Number(header);
  return Number.isFinite(declared) && declared <= limit ? declared : 0;
}
