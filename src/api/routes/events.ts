/** Ingest (SPEC §7): the session engine publishes events; they are stored with their deliveries before the 202. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { eventBody } from '../../domain/event-body.ts';
import { validatePayload } from '../../domain/events.ts';
import { newId } from '../../domain/ids.ts';
import { route } from '../../domain/routing.ts';
import type { EventDraft } from '../../domain/types.ts';
import { StoreConflict } from '../../store/store.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { InstanceParams, Ok, responses } from '../schemas.ts';
import { loadInstance } from './instances.ts';

export const MAX_EVENT_BYTES = 256 * 1024;
export const MAX_BATCH = 1000;
/** 8.64e15 ms: the greatest time a JavaScript Date can hold (275760-09-13). */
export const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;

const EventBody = Type.Object(
  {
    event: Type.String({ description: 'event kind from the catalog' }),
    payload: Type.Object({}, { additionalProperties: true }),
    event_id: Type.Optional(
      Type.String({
        pattern: '^evt_[A-Za-z0-9_-]{1,100}$',
        description: 'evt_ followed by 1 to 100 letters, digits, _ or -; the idempotency key',
      }),
    ),
    timestamp: Type.Optional(
      // The last representable date: beyond it the value is no time at all, and past 2^53 JSON alters it.
      Type.Integer({
        minimum: 0,
        maximum: MAX_TIMESTAMP_MS,
        description: 'milliseconds since the epoch; default now',
      }),
    ),
  },
  { additionalProperties: false },
);
type Body = Static<typeof EventBody>;
const BatchBody = Type.Object(
  { events: Type.Array(EventBody, { minItems: 1, maxItems: MAX_BATCH }) },
  { additionalProperties: false },
);
const Accepted = Type.Object({ event_id: Type.String(), deliveries: Type.Integer() });

export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['events'];

  async function publish(instanceId: string, bodies: Body[], prefix: (i: number) => string) {
    const now = ctx.clock();
    const errors = bodies.flatMap((b, i) => validatePayload(b.event, b.payload, prefix(i)));
    if (errors.length) throw HttpError.invalid(errors);
    // Media references become ready objects with a signed link before the body is serialised (SPEC §7).
    const payloads = await Promise.all(
      bodies.map((b, i) => ctx.media.complete(instanceId, b.event, b.payload, now, prefix(i))),
    );
    const mediaErrors = payloads.flatMap((p) => ('error' in p ? [p.error] : []));
    if (mediaErrors.length) throw HttpError.invalid(mediaErrors);
    const drafts: EventDraft[] = bodies.map((b, i) => {
      const event = {
        event_id: b.event_id ?? newId('evt', now),
        event: b.event,
        instance_id: instanceId,
        timestamp: b.timestamp ?? now,
        payload: (payloads[i] as { payload: Record<string, unknown> }).payload,
      };
      const body = eventBody(event);
      if (Buffer.byteLength(body) > MAX_EVENT_BYTES) {
        throw new HttpError(
          'payload_too_large',
          `${prefix(i) || 'event'}: larger than ${MAX_EVENT_BYTES} bytes`,
        );
      }
      return { ...event, body };
    });
    try {
      // The store wakes the dispatcher at its commit (listenForWork): the embedded one before the disk flush the 202
      // waits for, which takes that flush out of publish→arrival latency.
      const results = await ctx.store.ingest(instanceId, drafts, route, now);
      ctx.metrics?.eventsIngested(drafts.filter((_, i) => !results[i].duplicate).map((d) => d.event));
      return results.map(({ event_id, deliveries }) => ({ event_id, deliveries }));
    } catch (err) {
      if (err instanceof StoreConflict) throw new HttpError('conflict', err.message);
      throw err;
    }
  }

  app.post(
    '/instances/:instance_id/events',
    {
      bodyLimit: MAX_EVENT_BYTES + 1024,
      schema: {
        tags,
        params: InstanceParams,
        body: EventBody,
        response: responses(202, Ok(Accepted.properties)),
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const [result] = await publish(instance.instance_id, [request.body as Body], () => '');
      return reply.status(202).send({ success: true, ...result });
    },
  );

  app.post(
    '/instances/:instance_id/events/batch',
    {
      // Each event keeps its own 256 KiB limit; the batch as a whole may carry up to 32 MiB.
      bodyLimit: 32 * 1024 * 1024,
      schema: {
        tags,
        params: InstanceParams,
        body: BatchBody,
        response: responses(202, Ok({ results: Type.Array(Accepted) })),
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      const { events } = request.body as Static<typeof BatchBody>;
      const results = await publish(instance.instance_id, events, (i) => `events[${i}].`);
      return reply.status(202).send({ success: true, results });
    },
  );
}
