/**
 * The engine's own webhook, pointed at Herald: POST /instances/{id}/engine/waha takes WAHA's webhook body exactly as
 * WAHA sends it (waha-envelope.ts) and publishes the event it carries. Bearer authentication as everywhere (WAHA
 * sends the key through its webhook `customHeaders`); when the instance has an engine HMAC key, the body must carry
 * WAHA's HMAC-SHA512 of its exact bytes, checked before anything is stored.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEngineHmac, ENGINE_HMAC_HEADERS } from '../../domain/engine-hmac.ts';
import type { Instance } from '../../domain/types.ts';
import { readWahaEnvelope } from '../../domain/waha-envelope.ts';
import type { ApiContext } from '../context.ts';
import { HttpError } from '../errors.ts';
import { MAX_EVENT_BYTES, publishEvents } from '../publish.ts';
import { Answer, InstanceParams } from '../schemas.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const field = (description: string) => Type.Optional(Type.Unknown({ description }));
/** Described for the docs; the rules themselves are waha-envelope.ts's, whose messages name the field. */
const WahaBody = Type.Object(
  {
    id: field(
      'the event id (evt_…); it becomes the event_id, so WAHA retrying the same event stores it once',
    ),
    timestamp: field('milliseconds since the epoch; the event timestamp'),
    event: field(
      'the event kind, e.g. message; a kind outside the catalog goes only to webhooks subscribed to *',
    ),
    payload: field('the event payload, turned into the delivery format'),
    me: field("the session's own account { id, pushName }: its phone fills a session.status without one"),
    session: field('not delivered'),
    engine: field('not delivered'),
    metadata: field('not delivered'),
    environment: field('not delivered'),
  },
  {
    additionalProperties: true,
    description: "WAHA's webhook body, as WAHA sends it",
    examples: [
      {
        id: 'evt_01jd5q7kq4r8s2t6v0w4x8y2z6',
        timestamp: 1795341600000,
        session: 'default',
        engine: 'WEBJS',
        event: 'message',
        payload: {
          id: 'false_15557654321@c.us_3EB0C767D26A1D8F4A2B',
          from: '15557654321@c.us',
          fromMe: false,
          body: 'Hi! Is my order on its way?',
          hasMedia: false,
        },
        me: { id: '15550001111@c.us', pushName: 'Sales line' },
      },
    ],
  },
);

export function engineRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post(
    '/instances/:instance_id/engine/waha',
    {
      // WAHA's body carries engine data (`_data`) beyond the delivered event; the delivery body keeps its own limit.
      bodyLimit: 4 * MAX_EVENT_BYTES,
      config: { rawBody: true },
      schema: {
        tags: ['events'],
        summary: "Publish an event from WAHA's own webhook",
        params: InstanceParams,
        body: WahaBody,
        response: {
          202: Answer(
            'EventAccepted',
            'Stored with its deliveries; WAHA retrying the same id gets the same answer',
          ),
        },
        errors: [
          ...INSTANCE_ERRORS,
          'engine_hmac',
          'invalid_waha_event',
          'event_too_large',
          'event_id_elsewhere',
        ],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      verifyHmac(ctx, instance, request);
      const read = readWahaEnvelope(request.body);
      if ('errors' in read) throw HttpError.invalid(read.errors);
      const [result] = await publishEvents(ctx, instance.instance_id, [read.event], {
        prefix: () => '',
        anyKind: true,
      });
      return reply.status(202).send({ success: true, ...result });
    },
  );
}

function verifyHmac(ctx: ApiContext, instance: Instance, request: FastifyRequest): void {
  if (!instance.engine_hmac_sealed) return;
  const header = (name: string) => {
    const v = request.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const problem = checkEngineHmac(
    ctx.secretBox.open(instance.engine_hmac_sealed),
    request.rawBody ?? Buffer.alloc(0),
    header(ENGINE_HMAC_HEADERS.hmac),
    header(ENGINE_HMAC_HEADERS.algorithm),
  );
  if (problem) throw new HttpError('unauthorized', problem);
}
