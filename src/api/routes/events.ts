/** Herald's own event API: the session engine publishes events; they are stored with their deliveries before the 202. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { samplePayload } from '../../domain/samples.ts';
import { ingestTrace } from '../../telemetry/publish-span.ts';
import type { ApiContext } from '../context.ts';
import type { ErrorName } from '../error-catalog.ts';
import { MAX_EVENT_BYTES, publishEvents } from '../publish.ts';
import { Answer, InstanceParams, Ok } from '../schemas.ts';
import { INSTANCE_ERRORS } from './instances.ts';

export const MAX_BATCH = 1000;
/** 8.64e15 ms: the greatest time a JavaScript Date can hold (275760-09-13). */
export const MAX_TIMESTAMP_MS = 8_640_000_000_000_000;

const EVENT_EXAMPLE = {
  event: 'message',
  payload: samplePayload('message'),
  event_id: 'evt_01jd5q7h2k9x4m8n3p6r0t1v2w',
  timestamp: 1795341600000,
};
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
  { additionalProperties: false, examples: [EVENT_EXAMPLE] },
);
type Body = Static<typeof EventBody>;
const BatchBody = Type.Object(
  { events: Type.Array(EventBody, { minItems: 1, maxItems: MAX_BATCH }) },
  {
    additionalProperties: false,
    examples: [
      {
        // Without event_ids: Herald makes them (an id is an instance's own; this example may go to any).
        events: [
          { event: 'message', payload: samplePayload('message'), timestamp: 1795341600000 },
          { event: 'session.status', payload: samplePayload('session.status'), timestamp: 1795341601000 },
        ],
      },
    ],
  },
);
/** What publishing refuses, besides the instance. */
const PUBLISH_ERRORS: ErrorName[] = [...INSTANCE_ERRORS, 'event_id_elsewhere'];
const Accepted = Type.Object({ event_id: Type.String(), deliveries: Type.Integer() });

export function eventRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const tags = ['events'];

  app.post(
    '/instances/:instance_id/events',
    {
      bodyLimit: MAX_EVENT_BYTES + 1024,
      config: { publish: true },
      schema: {
        tags,
        params: InstanceParams,
        body: EventBody,
        response: {
          202: Answer(
            'EventAccepted',
            'Stored with its deliveries; the same event_id again gets the same answer',
          ),
        },
        errors: [...PUBLISH_ERRORS, 'invalid_event', 'event_too_large'],
      },
    },
    async (request, reply) => {
      // No read of the instance first: the key's access was checked before the body, and the ingest's own
      // transaction finds a missing instance (404).
      const { instance_id } = request.params as Static<typeof InstanceParams>;
      const [result] = await publishEvents(ctx, instance_id, [request.body as Body], {
        prefix: () => '',
        trace: ingestTrace(request),
      });
      return reply.status(202).send({ success: true, ...result });
    },
  );

  app.post(
    '/instances/:instance_id/events/batch',
    {
      // Each event keeps its own 256 KiB limit; the batch as a whole may carry up to 32 MiB.
      bodyLimit: 32 * 1024 * 1024,
      config: { publish: true },
      schema: {
        tags,
        params: InstanceParams,
        body: BatchBody,
        response: {
          202: Ok(
            { results: Type.Array(Accepted) },
            { description: 'Every event stored with its deliveries, in the order sent' },
          ),
        },
        errors: [...PUBLISH_ERRORS, 'invalid_batch', 'batch_event_too_large'],
      },
    },
    async (request, reply) => {
      const { instance_id } = request.params as Static<typeof InstanceParams>;
      const { events } = request.body as Static<typeof BatchBody>;
      const results = await publishEvents(ctx, instance_id, events, {
        prefix: (i) => `events[${i}].`,
        trace: ingestTrace(request),
      });
      return reply.status(202).send({ success: true, results });
    },
  );
}
