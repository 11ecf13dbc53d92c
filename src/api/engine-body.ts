/**
 * The engine's webhook body limit (ENGINE_MAX_BODY_BYTES). A body over it is answered 413, and since the engine will
 * retry it and then drop the event, the refusal is logged with the event's kind and id, read from the body's first
 * bytes (WAHA writes `id` and `event` before the payload), and counted in /metrics, so that an operator sees each one.
 */
import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';

/** Enough of the body to find its `id` and `event`. */
const HEAD_BYTES = 16 * 1024;
/** How long a refused body's first bytes are waited for. */
const HEAD_WAIT_MS = 2000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The first bytes of an engine's body, to name it when it is refused. */
    engineHead?: Buffer;
  }
}

export const engineBodyTooLarge = (limit: number) =>
  new HttpError(
    'payload_too_large',
    `body: larger than ${limit} bytes (ENGINE_MAX_BODY_BYTES); the event was not stored`,
  );

/**
 * The route's preParsing step: a body that declares more than `limit` bytes is refused after its first bytes are
 * read. One that declares its length within the limit passes as it is (the parser holds it to that length); only a
 * body without a declared length keeps its first bytes on the request as it streams, for the parser may find it
 * over the limit.
 */
export function keepEngineHead(limit: number) {
  return async (request: FastifyRequest, _reply: FastifyReply, payload: NodeJS.ReadableStream) => {
    const declared = request.headers['content-length'];
    if (declared !== undefined) {
      if (Number(declared) <= limit) return payload;
      request.engineHead = await readHead(payload);
      throw engineBodyTooLarge(limit);
    }
    const chunks: Buffer[] = [];
    let kept = 0;
    return payload.pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          if (kept < HEAD_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
            request.engineHead = Buffer.concat(chunks);
          }
          done(null, chunk);
        },
      }),
    );
  };
}

function readHead(payload: NodeJS.ReadableStream): Promise<Buffer> {
  // Read by hand and paused, not through an async iterator: leaving one early destroys the socket before the 413.
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      payload.removeListener('data', onData);
      payload.pause();
      resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= HEAD_BYTES) done();
    };
    const timer = setTimeout(done, HEAD_WAIT_MS);
    payload.on('data', onData);
    payload.once('end', done);
    payload.once('error', done);
  });
}

/** The kind and id a refused body names in its first bytes, where it names them. */
export function nameOf(head: Buffer | undefined): { event: string | null; id: string | null } {
  const text = head?.toString('utf8') ?? '';
  const field = (name: string) => new RegExp(`"${name}"\\s*:\\s*"([^"\\\\]{1,200})"`).exec(text)?.[1] ?? null;
  return { event: field('event'), id: field('id') };
}

/**
 * The route options of an engine endpoint's body: up to ENGINE_MAX_BODY_BYTES (engine data such as WAHA's `_data` is
 * delivered with the event), its raw bytes kept (a signature may cover them), and a refusal logged and counted.
 */
export function engineBodyOptions(ctx: ApiContext) {
  const limit = ctx.config.engineMaxBodyBytes;
  return {
    bodyLimit: limit,
    preParsing: keepEngineHead(limit),
    onError: async (request: FastifyRequest, _reply: FastifyReply, error: Error) => {
      const code = (error as { code?: string }).code;
      if (code !== 'payload_too_large' && code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return;
      const { event, id } = nameOf(request.engineHead);
      ctx.metrics?.engineBodyTooLarge();
      request.log.warn(
        { instance_id: (request.params as { instance_id?: string }).instance_id, event, id },
        `engine webhook body refused: larger than ENGINE_MAX_BODY_BYTES (${limit} bytes); the engine will retry it, then drop it`,
      );
    },
  };
}
