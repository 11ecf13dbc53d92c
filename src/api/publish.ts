/**
 * Publishing events, whichever way they arrive (Herald's own event API or an engine's webhook): payload rules,
 * normalisation into the delivery format, uploads completed, the delivery body serialised once, then one store
 * transaction with every delivery. The 202 that follows means all of it is on disk.
 */
import { eventBody } from '../domain/event-body.ts';
import { isEventKind, validateKnownPayload, validatePayload } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { normalise } from '../domain/normalise.ts';
import { route } from '../domain/routing.ts';
import type { EventDraft } from '../domain/types.ts';
import { InstanceMissing, StoreConflict } from '../store/errors.ts';
import type { ApiContext } from './context.ts';
import { HttpError } from './errors.ts';
import { lidLearning } from './lid-phones.ts';

export const MAX_EVENT_BYTES = 256 * 1024;

/** The 413 of an event whose delivery body is too large; `field` names it ("event", "events[3]"). */
export const eventTooLarge = (field: string) =>
  new HttpError('payload_too_large', `${field}: larger than ${MAX_EVENT_BYTES} bytes`);

export interface Publication {
  event: string;
  payload: unknown;
  event_id?: string | null;
  timestamp?: number | null;
  /** The publisher's own name for the event (WAHA's envelope id), which breaks a tie of session.status timestamps. */
  order_id?: string | null;
  /** The session's own phone number, when the engine said it (WAHA's `me`). */
  sessionPhone?: string | null;
  /** A session.status's place among the instance's, when not its timestamp (EventDraft.status_at). */
  status_at?: number | null;
  /** This event's own trace context (a source message's span), instead of the options' `trace`. */
  trace?: string | null;
}

/** An engine's event: what it reports (domain/engine-dedupe.ts), to drop the engine's repeats of it. */
export interface Repeats {
  key: (p: Publication) => string | null;
  windowMs: number;
}

export interface PublishOptions {
  /** Field prefix of the i-th event in error messages, e.g. `events[3].`. */
  prefix: (i: number) => string;
  /**
   * Kinds outside the catalog are accepted (an engine must never be made to retry an event for ever); they go
   * only to webhooks subscribed to `*`. Herald's own event API refuses them.
   */
  anyKind?: boolean;
  /**
   * An engine's event: its delivery body may be as large as the engine's body (ENGINE_MAX_BODY_BYTES, which the route
   * enforces), since what an engine sends is delivered, engine data included.
   */
  largeBodies?: boolean;
  /** An engine's events: one that repeats a report of the last `windowMs` is answered as a duplicate, not stored. */
  repeats?: Repeats;
  /**
   * Posted to an engine endpoint, not to Herald's event API: its media downloads may carry ENGINE_MEDIA_HEADERS
   * (under ENGINE_MEDIA_PREFIXES). Kept with each media job, so that a download resumed later knows it too.
   */
  viaEngine?: boolean;
  /** The publish request's trace (telemetry/publish-span.ts, ingestTrace), stored with each event; null: none. */
  trace?: string | null;
}

export interface Published {
  event_id: string;
  deliveries: number;
  /** Only on an engine's repeat, which is not stored. */
  duplicate?: true;
}

/** What publishing did with each event, for a caller that counts: `replay` when its event_id was stored before. */
export interface Ingested extends Published {
  replay: boolean;
}

type Obj = Record<string, unknown>;

export async function publishEvents(
  ctx: ApiContext,
  instanceId: string,
  items: Publication[],
  options: PublishOptions,
): Promise<Published[]> {
  const ingested = await ingestPublications(ctx, instanceId, items, options);
  return ingested.map(({ replay: _, ...published }) => published);
}

/** publishEvents, saying which events were already stored (a source counts those as duplicates). */
export async function ingestPublications(
  ctx: Pick<ApiContext, 'clock' | 'store' | 'media' | 'events' | 'metrics'>,
  instanceId: string,
  items: Publication[],
  { prefix, anyKind = false, largeBodies = false, repeats, viaEngine = false, trace = null }: PublishOptions,
): Promise<Ingested[]> {
  const now = ctx.clock();
  const known = items.map((p) => isEventKind(p.event));
  const errors = items.flatMap((p, i) =>
    anyKind && !known[i]
      ? []
      : (anyKind ? validateKnownPayload : validatePayload)(p.event, p.payload, prefix(i)),
  );
  if (errors.length) throw HttpError.invalid(errors);
  const lids = await lidLearning(
    ctx.store,
    instanceId,
    items.filter((_, i) => known[i]),
  );
  const normalised = items.map((p, i) =>
    known[i]
      ? normalise(p.event, p.payload as Obj, p.sessionPhone ?? null, lids.phones)
      : { payload: p.payload, download: null },
  );
  // Media references become ready objects with a signed link before the body is serialised.
  const completed = await Promise.all(
    normalised.map((n, i) =>
      known[i] ? ctx.media.complete(instanceId, items[i].event, n.payload as Obj, now, prefix(i)) : n,
    ),
  );
  const mediaErrors = completed.flatMap((c) => ('error' in c ? [c.error] : []));
  if (mediaErrors.length) throw HttpError.invalid(mediaErrors);
  const drafts: EventDraft[] = items.map((p, i) => {
    const event = {
      event_id: p.event_id ?? newId('evt', now),
      event: p.event,
      instance_id: instanceId,
      timestamp: p.timestamp ?? now,
      payload: (completed[i] as { payload: Obj }).payload,
    };
    const body = eventBody(event);
    if (!largeBodies && Buffer.byteLength(body) > MAX_EVENT_BYTES) {
      throw eventTooLarge(prefix(i).replace(/\.$/, '') || 'event');
    }
    const download = normalised[i].download;
    const order_id = p.order_id ?? event.event_id;
    const status_at = p.status_at ?? null;
    return {
      ...event,
      order_id,
      status_at,
      body,
      download: download && { ...download, via_engine: viaEngine },
      trace_context: p.trace ?? trace,
    };
  });
  const repeated = repeats
    ? await findRepeats(ctx, instanceId, items, drafts, repeats, now)
    : drafts.map(() => false);
  const fresh = drafts.filter((_, i) => !repeated[i]);
  try {
    // The store wakes the dispatcher at its commit (listenForWork): the embedded one before the disk flush the 202
    // waits for, which takes that flush out of publish→arrival latency.
    const results = fresh.length > 0 ? await ctx.events.ingest(instanceId, fresh, route, now) : [];
    await lids.learn(now);
    ctx.metrics?.eventsIngested(fresh.filter((_, i) => !results[i].duplicate).map((d) => d.event));
    let next = 0;
    return drafts.map((d, i): Ingested => {
      if (repeated[i]) return { event_id: d.event_id, deliveries: 0, duplicate: true, replay: false };
      const { event_id, deliveries, duplicate } = results[next++];
      return { event_id, deliveries, replay: duplicate };
    });
  } catch (err) {
    if (err instanceof StoreConflict) throw new HttpError('conflict', err.message);
    if (err instanceof InstanceMissing) throw HttpError.notFound('instance', instanceId);
    throw err;
  }
}

/**
 * Which drafts repeat what an engine reported within the window. Asked once the events are known valid (an invalid one
 * claims no report); the engine's retry of the first report holds the key itself, so it is stored as ever.
 */
async function findRepeats(
  ctx: Pick<ApiContext, 'store'>,
  instanceId: string,
  items: Publication[],
  drafts: EventDraft[],
  { key, windowMs }: Repeats,
  now: number,
): Promise<boolean[]> {
  return Promise.all(
    items.map(async (p, i) => {
      const k = windowMs > 0 ? key(p) : null;
      if (k === null) return false;
      const holder = await ctx.store.engineRepeats.rememberEngineEvent(
        instanceId,
        k,
        drafts[i].event_id,
        now,
        windowMs,
      );
      return holder !== drafts[i].event_id;
    }),
  );
}
