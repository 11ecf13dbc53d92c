/**
 * An engine's events published, whichever way they come in (the engine's webhook, a queue a source consumes): the
 * rules every engine's events share, then Evolution API's body read (domain/evolution-body.ts) and published. HTTP
 * concerns (authentication, the path, headers) stay with the routes, so that a source's consumer calls the same.
 */
import { dedupeKey } from '../domain/engine-dedupe.ts';
import { type EvolutionEvent, type InlineFile, readEvolutionBody } from '../domain/evolution-body.ts';
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';
import { type Publication, type Published, type PublishOptions, publishEvents } from './publish.ts';

/**
 * How an engine's events are published: any kind (an engine must never be made to retry an event for ever), bodies
 * as large as the engine's, ENGINE_MEDIA_HEADERS on its downloads, and the engine's repeats dropped.
 */
export function engineOptions(ctx: { config: Pick<ApiContext['config'], 'engineDedupeMs'> }): PublishOptions {
  return {
    prefix: () => '',
    anyKind: true,
    largeBodies: true,
    viaEngine: true,
    repeats: { key: (p) => dedupeKey(p.event, p.payload), windowMs: ctx.config.engineDedupeMs },
  };
}

/** An engine's events, published at the instance: one answer per event, in order. */
export function publishEngineEvents(
  ctx: ApiContext,
  instanceId: string,
  items: Publication[],
  trace: string | null = null,
): Promise<Published[]> {
  return publishEvents(ctx, instanceId, items, { ...engineOptions(ctx), trace });
}

/** One event of an Evolution body as answered: its Herald kind with its id and deliveries. */
export type EvolutionPublished = Published & { event: string };

/**
 * Evolution API's body, published at the instance: a 400 (HttpError) naming the field that breaks a rule; else each
 * event's answer, in the body's order (a `message` before its `message.any`). The file Evolution sent inline is
 * stored once, before the events, and every event that shows it carries the same media object.
 */
export async function ingestEvolution(
  ctx: ApiContext,
  instanceId: string,
  body: unknown,
  trace: string | null = null,
): Promise<EvolutionPublished[]> {
  const result = readEvolutionBody(instanceId, body);
  if ('errors' in result) throw HttpError.invalid(result.errors);
  const { events, inline } = result.read;
  const items = await withInlineFile(ctx, instanceId, events, inline);
  const published = await publishEngineEvents(ctx, instanceId, items, trace);
  return published.map((p, i) => ({ event: events[i].event, ...p }));
}

/** An event that may show the file its body sent inline. */
type WithInline = Omit<EvolutionEvent, 'payload'> &
  Pick<Publication, 'payload' | 'order_id' | 'sessionPhone'>;

/**
 * A body's events as published: the file it sent inline stored once, before them, and the same media object in each
 * event that shows it. A source reads the body the same way (domain/source-message.ts) and calls this too.
 */
export async function withInlineFile(
  ctx: Pick<ApiContext, 'media'>,
  instanceId: string,
  events: WithInline[],
  inline: InlineFile | null,
): Promise<Publication[]> {
  const media =
    inline &&
    (await ctx.media.storeInline(
      instanceId,
      Buffer.from(inline.base64, 'base64'),
      inline.mimetype,
      inline.filename,
    ));
  return events.map(
    (e): Publication => ({
      event: e.event,
      payload: e.inline_media && media ? { ...(e.payload as object), media } : e.payload,
      event_id: e.event_id,
      timestamp: e.timestamp,
      status_at: e.status_at,
      order_id: e.order_id,
      sessionPhone: e.sessionPhone,
    }),
  );
}
