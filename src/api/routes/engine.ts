/**
 * The engine's own webhook, pointed at Herald: POST /instances/{id}/engine/waha takes WAHA's webhook body exactly as
 * WAHA sends it (waha-envelope.ts) and publishes the event it carries. Bearer authentication as everywhere (WAHA
 * sends the key through its webhook `customHeaders`); when the instance has an engine HMAC key, the body must carry
 * WAHA's HMAC-SHA512 of its exact bytes, checked before anything is stored. It is ingest: on the ingest rate limit.
 *
 * WAHA retries every answer but a 2xx, so each answer here is chosen for what WAHA does next: an event is stored
 * once per instance however often it is sent (its event_id comes from the instance and the envelope's id, or the
 * `X-Webhook-Request-Id` of a WAHA that sends no id), and a message the engine reports twice is dropped as a repeat.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkEngineHmac, ENGINE_HMAC_HEADERS } from '../../domain/engine-hmac.ts';
import type { Instance } from '../../domain/types.ts';
import { engineEventId, readWahaEnvelope } from '../../domain/waha-envelope.ts';
import { ingestTrace } from '../../telemetry/publish-span.ts';
import type { ApiContext } from '../context.ts';
import { engineBodyOptions } from '../engine-body.ts';
import { publishEngineEvents } from '../engine-ingest.ts';
import { HttpError } from '../errors.ts';
import { Answer, InstanceParams } from '../schemas.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const field = (description: string) => Type.Optional(Type.Unknown({ description }));
/** Described for the docs; the rules themselves are waha-envelope.ts's, whose messages name the field. */
const WahaBody = Type.Object(
  {
    id: field(
      'the event id (evt_…): the event_id is derived from it and the instance (evt_ + 26 characters of SHA-256 over ' +
        'both), so WAHA retrying the event stores it once, and the same event sent to two instances is one event ' +
        'at each. Without an id, X-Webhook-Request-Id plays its part.',
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
      ...engineBodyOptions(ctx),
      config: { rawBody: true, publish: true },
      schema: {
        tags: ['events'],
        summary: "Publish an event from WAHA's own webhook",
        params: InstanceParams,
        body: WahaBody,
        response: {
          202: Answer(
            'EventAccepted',
            'Stored with its deliveries; WAHA retrying the same id gets the same answer. A repeat of a message ' +
              'the engine reported within ENGINE_DEDUPE_S is answered with deliveries 0 and duplicate: true, and not stored.',
          ),
        },
        errors: [...INSTANCE_ERRORS, 'engine_hmac', 'invalid_waha_event', 'engine_body_too_large'],
      },
    },
    async (request, reply) => {
      const instance = await loadInstance(ctx, request);
      verifyHmac(ctx, instance, request);
      const read = readWahaEnvelope(request.body);
      if ('errors' in read) throw HttpError.invalid(read.errors);
      const { engineId, ...event } = read.event;
      const requestId = firstHeader(request, 'x-webhook-request-id');
      const source = engineId ? { envelopeId: engineId } : requestId ? { requestId } : null;
      const [result] = await publishEngineEvents(
        ctx,
        instance.instance_id,
        [{ ...event, event_id: source && engineEventId(instance.instance_id, source), order_id: engineId }],
        ingestTrace(request),
      );
      return reply.status(202).send({ success: true, ...result });
    },
  );
}

function firstHeader(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function verifyHmac(ctx: ApiContext, instance: Instance, request: FastifyRequest): void {
  if (!instance.engine_hmac_sealed) return;
  const header = (name: string) => firstHeader(request, name);
  const problem = checkEngineHmac(
    ctx.secretBox.open(instance.engine_hmac_sealed),
    request.rawBody ?? Buffer.alloc(0),
    header(ENGINE_HMAC_HEADERS.hmac),
    header(ENGINE_HMAC_HEADERS.algorithm),
  );
  if (problem) throw new HttpError('unauthorized', problem);
}
