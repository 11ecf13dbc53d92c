/**
 * Sources: queues Herald consumes events from (src/sources), admin only. A url's password is sealed at rest and shown
 * as ****; a PATCH that gives **** back keeps it (for the same server and user). What a source's consumers report
 * (state, last_error) and count is read from the store, where every process writes it.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { newId } from '../../domain/ids.ts';
import {
  maskSourcePassword,
  parseSourceUrl,
  restoreSourcePassword,
  SourceUrlProblem,
} from '../../domain/source-url.ts';
import { isSourceFormat, SOURCE_FORMATS } from '../../sources/formats.ts';
import { newSource, type Source, type SourceConfig, type SourceFormat } from '../../store/records.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { IdParam, Ok } from '../schemas.ts';
import { sourceView } from '../source-view.ts';

const SourceBody = Type.Object(
  {
    url: Type.String({
      maxLength: 2048,
      description:
        'amqp(s)://user:pass@host/vhost?queue=Q[&exchange=E&binding=K], nats://host/STREAM?consumer=C[&subject=S] ' +
        'or redis(s)://:pass@host/db?stream=S&group=G; the password is sealed and shown as ****',
    }),
    format: Type.String({
      description: `how each message's body is read: ${Object.keys(SOURCE_FORMATS).join(', ')}`,
    }),
    instance_id: Type.Optional(
      Type.Union([IdParam('instance id', 'ins'), Type.Null()], {
        description:
          "the instance every event goes to; without one, the body names it (herald's instance_id, WAHA's session)",
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ url: 'amqp://rabbit.internal:5672/%2F?queue=herald-events', format: 'herald' }],
  },
);
type Body = Static<typeof SourceBody>;
const SourceParams = Type.Object({ source_id: IdParam('source id', 'src') });
const ParkedQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: 'at most this many (default 100)' }),
  ),
  cursor: Type.Optional(
    Type.String({ pattern: '^[0-9]{1,18}$', description: 'next_cursor of the page before' }),
  ),
});
const SourceView = Type.Object({
  source_id: Type.String(),
  url: Type.String({ description: 'with its password as ****' }),
  format: Type.String(),
  instance_id: Type.Union([Type.String(), Type.Null()]),
  state: Type.String({ description: 'connecting, consuming, reconnecting or failed (still retried)' }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'why it is not consuming, in words' }),
  received: Type.Integer(),
  ingested: Type.Integer(),
  duplicates: Type.Integer({
    description: 'messages whose event was stored before (a redelivery) or an engine repeat',
  }),
  parked: Type.Integer({ description: 'messages that can never be ingested, kept in …/parked' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
const Parked = Type.Object({
  parked_at: Type.String({ format: 'date-time' }),
  reason: Type.String(),
  body: Type.String({ description: 'the first 4 KiB of the message, as text' }),
});

export function sourceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['sources'];
  const one = Ok({ source: SourceView }, { description: 'The source' });

  app.post(
    '/sources',
    {
      schema: { tags, body: SourceBody, response: { 201: one }, errors: ['invalid_source'] },
    },
    async (request, reply) => {
      const now = ctx.clock();
      const config = await configOf(ctx, request.body as Body, null);
      const source = newSource(newId('src', now), config, now);
      await ctx.store.sources.createSource(source);
      return reply.status(201).send({ success: true, source: sourceView(source) });
    },
  );

  app.get(
    '/sources',
    {
      schema: {
        tags,
        response: {
          200: Ok({ sources: Type.Array(SourceView) }, { description: 'Every source, oldest first' }),
        },
      },
    },
    async () => ({ success: true, sources: (await ctx.store.sources.listSources()).map(sourceView) }),
  );

  app.get(
    '/sources/:source_id',
    { schema: { tags, params: SourceParams, response: { 200: one }, errors: ['source_not_found'] } },
    async (request) => ({ success: true, source: sourceView(await load(ctx, request.params)) }),
  );

  app.patch(
    '/sources/:source_id',
    {
      schema: {
        tags,
        params: SourceParams,
        body: SourceBody,
        response: { 200: one },
        errors: ['source_not_found', 'invalid_source'],
      },
    },
    async (request) => {
      const current = await load(ctx, request.params);
      const config = await configOf(ctx, request.body as Body, current);
      const updated = await ctx.store.sources.updateSource(current.source_id, config, ctx.clock());
      if (!updated) throw HttpError.notFound('source', current.source_id);
      return { success: true, source: sourceView(updated) };
    },
  );

  app.delete(
    '/sources/:source_id',
    {
      schema: {
        tags,
        params: SourceParams,
        response: {
          200: Ok({}, { description: 'Deleted; every process stops consuming it within a second' }),
        },
        errors: ['source_not_found'],
      },
    },
    async (request) => {
      const { source_id } = request.params as Static<typeof SourceParams>;
      if (!(await ctx.store.sources.deleteSource(source_id))) throw HttpError.notFound('source', source_id);
      return { success: true };
    },
  );

  app.get(
    '/sources/:source_id/parked',
    {
      schema: {
        tags,
        params: SourceParams,
        querystring: ParkedQuery,
        response: {
          200: Ok(
            { parked: Type.Array(Parked), next_cursor: Type.Union([Type.String(), Type.Null()]) },
            { description: 'Messages that can never be ingested, oldest first' },
          ),
        },
        errors: ['source_not_found'],
      },
    },
    async (request) => {
      const source = await load(ctx, request.params);
      const q = request.query as Static<typeof ParkedQuery>;
      const limit = q.limit ?? 100;
      const page = await ctx.store.sources.listParked(
        source.source_id,
        limit,
        q.cursor ? Number(q.cursor) : null,
      );
      const last = page.parked.at(-1);
      return {
        success: true,
        parked: page.parked.map((p) => ({
          parked_at: new Date(p.parked_at).toISOString(),
          reason: p.reason,
          body: p.body,
        })),
        next_cursor: page.more && last ? String(last.seq) : null,
      };
    },
  );
}

async function load(ctx: ApiContext, params: unknown): Promise<Source> {
  const { source_id } = params as Static<typeof SourceParams>;
  const source = await ctx.store.sources.getSource(source_id);
  if (!source) throw HttpError.notFound('source', source_id);
  return source;
}

const invalid = (field: string, message: string) => HttpError.invalid([{ field, message }]);

/** The configuration a body sets: its url checked part by part and its password sealed, the instance known. */
export async function configOf(ctx: ApiContext, body: Body, current: Source | null): Promise<SourceConfig> {
  const parsed = parseSourceUrl(body.url);
  if (parsed instanceof SourceUrlProblem) throw invalid('url', parsed.message.replace(/^url: /, ''));
  if (!isSourceFormat(body.format))
    throw invalid('format', `must be one of ${Object.keys(SOURCE_FORMATS).join(', ')}`);
  const instance_id = body.instance_id ?? null;
  if (instance_id !== null && !(await ctx.store.catalog.getInstance(instance_id)))
    throw invalid('instance_id', `no instance ${instance_id}`);
  return { ...sealedUrl(ctx, body.url, current), format: body.format as SourceFormat, instance_id };
}

function sealedUrl(
  ctx: ApiContext,
  url: string,
  current: Source | null,
): Pick<SourceConfig, 'url' | 'url_sealed'> {
  const shown = maskSourcePassword(url);
  if (!url.includes('****'))
    return { url: shown, url_sealed: shown === url ? null : ctx.secretBox.seal(url) };
  const original = current?.url_sealed ? ctx.secretBox.open(current.url_sealed) : null;
  const restored = original === null ? null : restoreSourcePassword(url, original);
  if (restored === null)
    throw invalid(
      'url',
      "**** stands for the source's current password, for the same server and user only (scheme, host, port and " +
        'user unchanged): give the password',
    );
  return { url, url_sealed: ctx.secretBox.seal(restored) };
}
