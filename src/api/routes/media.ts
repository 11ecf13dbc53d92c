/**
 * Media files: uploads by the session engine, and downloads by receivers through signed links
 * that need no API key (media-link.ts). Uploads are raw bytes of any Content-Type, so this scope has its own body
 * handling: the stream goes to storage as it arrives, never whole into memory.
 */
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkLink } from '../../domain/media-link.ts';
import { parseRange } from '../../media/byte-range.ts';
import { contentDisposition } from '../../media/disposition.ts';
import { Media } from '../../media/media.ts';
import type { MediaMeta } from '../../media/media-store.ts';
import { Stopped, TooLarge } from '../../media/spool.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { linkErrors } from '../media-errors.ts';
import { InstanceParams, Ok } from '../schemas.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const Uploaded = Ok(
  {
    media_id: Type.String(),
    mimetype: Type.String(),
    size: Type.Integer(),
    sha256: Type.String({ description: 'lowercase hex SHA-256 of the bytes' }),
  },
  { description: 'Stored; refer to media_id in an event’s payload.media' },
);
const File = (description: string) => Type.String({ format: 'binary', description });

/**
 * The upload's body for /openapi.json alone: the route reads the raw stream itself, so Fastify must not validate a
 * body, and @fastify/swagger describes one only from `schema.body`.
 */
const UPLOAD_BODY = {
  type: 'string',
  contentMediaType: 'application/octet-stream',
  description:
    'The file itself, its bytes as they are, at most MEDIA_MAX_BYTES (64 MiB by default). Content-Type is its media ' +
    'type, e.g. image/jpeg or audio/ogg; codecs=opus (application/octet-stream when absent).',
};

/** A stopping Herald answers an upload in flight at once, rather than wait for a client that may trickle for hours. */
const RETRY_AFTER_STOP_S = 5;

export function mediaRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort());
  app.register(async (scope) => {
    // Any Content-Type (or none) is accepted here and left unread: the handler streams request.raw itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    // Checked before Fastify parses the header, which would answer a malformed one with a JSON-minded 415.
    scope.addHook('preParsing', async (request) => {
      const type = request.headers['content-type'];
      if (request.method !== 'POST' || type === undefined) return;
      const rule = Media.checkType(type.trim());
      if (rule) throw HttpError.invalid([{ field: 'Content-Type', message: rule }]);
    });

    scope.post(
      '/instances/:instance_id/media',
      {
        config: {
          streamsBody: true,
          swaggerTransform: ({ schema, url }) => ({
            schema: { ...schema, body: UPLOAD_BODY, consumes: ['*/*'] },
            url,
          }),
        },
        schema: {
          tags: ['media'],
          summary: 'Upload a media file: the raw bytes, with their Content-Type',
          params: InstanceParams,
          response: { 201: Uploaded },
          errors: [...INSTANCE_ERRORS, 'invalid_media_type', 'media_too_large'],
        },
      },
      async (request, reply) => upload(ctx, request, reply, stopping.signal),
    );

    scope.get(
      '/media/:media_id',
      {
        config: { public: true },
        schema: {
          tags: ['media'],
          summary: 'Download a media file through the signed url of a delivered payload (no API key)',
          produces: ['application/octet-stream'],
          response: {
            200: File('The file, with its Content-Type, ETag and a Cache-Control that ends with the link'),
            206: File('The part a Range asked for; Content-Range says which'),
            304: { type: 'null', description: 'Not modified: If-None-Match matched its ETag' },
          },
          errors: ['link_forbidden', 'link_expired', 'media_not_found', 'range_not_satisfiable'],
        },
      },
      async (request, reply) => download(ctx, request, reply),
    );
  });
}

async function upload(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply, stop: AbortSignal) {
  const instance = await loadInstance(ctx, request);
  const mimetype = (request.headers['content-type'] ?? 'application/octet-stream').trim();
  const tooLarge = () => linkErrors.tooLarge(ctx.config.mediaMaxBytes);
  const declared = Number(request.headers['content-length']);
  // Refused before a byte is read (unread-body.ts closes the connection after the answer).
  if (declared > ctx.config.mediaMaxBytes) throw tooLarge();
  try {
    const meta = await ctx.media.upload(instance.instance_id, request.raw, mimetype, stop);
    return reply.status(201).send({
      success: true,
      media_id: meta.media_id,
      mimetype: meta.mimetype,
      size: meta.size,
      sha256: meta.sha256,
    });
  } catch (err) {
    if (err instanceof TooLarge) throw tooLarge();
    if (!(err instanceof Stopped)) throw err;
    reply.header('retry-after', String(RETRY_AFTER_STOP_S));
    throw new HttpError('unavailable', 'Herald is stopping: the upload was not kept; send it again');
  }
}

async function download(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply) {
  const { media_id } = request.params as { media_id: string };
  const query = request.query as Record<string, unknown>;
  // A repeated parameter arrives as an array: only a single string can be a genuine link's.
  const expires = typeof query.expires === 'string' ? query.expires : undefined;
  const sig = typeof query.sig === 'string' ? query.sig : undefined;
  const now = ctx.clock();
  const check = checkLink(ctx.media.linkKey, media_id, expires, sig, now);
  if (check === 'forbidden') throw linkErrors.forbidden();
  if (check === 'expired') throw linkErrors.expired(Number(expires));
  const meta = await ctx.media.store.get(media_id);
  // A deleted instance takes its media with it at once; the sweeper removes the bytes at their expiry.
  if (!meta || !(await ctx.store.catalog.getInstance(meta.instance_id)))
    throw HttpError.notFound('media', media_id);
  const etag = `"${meta.sha256}"`;
  setHeaders(reply, meta, etag, Number(expires) * 1000 - now);
  if (matches(request.headers['if-none-match'], etag)) return reply.status(304).send();

  const ifRange = request.headers['if-range'];
  const range =
    ifRange === undefined || ifRange === etag ? parseRange(request.headers.range, meta.size) : null;
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${meta.size}`);
    throw linkErrors.outsideFile(meta.size);
  }
  const length = range ? range.end - range.start + 1 : meta.size;
  reply.header('content-length', String(length));
  if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${meta.size}`);
  // An empty stream for HEAD: Fastify's HEAD handling would otherwise recount Content-Length from the payload.
  if (request.method === 'HEAD') return reply.send(Readable.from([]));
  if (length === 0) return reply.send('');
  const stream = await ctx.media.store.read(media_id, range ?? undefined);
  if (!stream) throw HttpError.notFound('media', media_id);
  return reply.send(stream);
}

function setHeaders(reply: FastifyReply, meta: MediaMeta, etag: string, lifeMs: number): void {
  reply.headers({
    'content-type': meta.mimetype,
    // Shown only for pictures, sound and video; anything else (HTML, SVG, PDF) is saved, never opened as a page.
    'content-disposition': contentDisposition(meta),
    etag,
    'accept-ranges': 'bytes',
    'last-modified': new Date(meta.created_at).toUTCString(),
    // Caches may keep it as long as the link lives, never longer; only the holder of the link may.
    'cache-control': `private, max-age=${Math.max(0, Math.floor(lifeMs / 1000))}, immutable`,
    // Uploaded content is served from Herald's own origin: never run it, never sniff it into something runnable.
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
  });
}

/** If-None-Match: `*` or a list of tags, weak ones compared weakly (RFC 9110 §13.1.2). */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
