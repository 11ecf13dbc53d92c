/**
 * Evolution API's instance webhook, pointed at Herald: POST /instances/{id}/engine/evolution, and with Evolution's
 * `byEvents` …/engine/evolution/{event} (`/messages-upsert`; `…/evolution//messages-upsert` when the url Evolution
 * was given ends with a slash). The body's `event` decides, never the path. Authentication: a bearer key as
 * everywhere, or, for an instance with an engine HMAC key, the JWT Evolution signs with it (engine-jwt-auth.ts).
 * It is ingest: on the ingest rate limit. The reading and publishing are engine-ingest.ts's, which sources share.
 *
 * Evolution retries every answer but 400, 401, 403, 404 and 422 (10 attempts over about 20 minutes), with the same
 * body: each event's id is derived from what it reports, so a retry is stored once.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ingestTrace } from '../../telemetry/publish-span.ts';
import type { ApiContext } from '../context.ts';
import { engineBodyOptions } from '../engine-body.ts';
import { ingestEvolution } from '../engine-ingest.ts';
import type { ErrorName } from '../error-catalog.ts';
import { InstanceParams, Ok } from '../schemas.ts';
import { INSTANCE_ERRORS, loadInstance } from './instances.ts';

const field = (description: string) => Type.Optional(Type.Unknown({ description }));

/** Described for the docs; the rules themselves are domain/evolution-body.ts's, whose messages name the field. */
const EvolutionBody = Type.Object(
  {
    event: field(
      'Evolution’s event, e.g. messages.upsert: it decides the Herald kind (message and message.any, message.ack, ' +
        'session.status…); an event Herald has no kind for keeps its name and goes only to webhooks subscribed to *',
    ),
    data: field('the event’s data, turned into the delivery format; delivered as the payload’s _evolution'),
    sender: field('the session’s own id: the `to` of messages it gets, the `from` of those it sends'),
    date_time: field('orders the session.status events of an instance; not delivered'),
    instance: field('not delivered'),
    destination: field('not delivered'),
    server_url: field('not delivered'),
    apikey: field('Evolution’s own credential: never delivered'),
  },
  {
    additionalProperties: true,
    description: "Evolution API's webhook body, as Evolution sends it",
    examples: [
      {
        event: 'messages.upsert',
        instance: 'sales',
        data: {
          key: { remoteJid: '5511988887777@s.whatsapp.net', fromMe: false, id: '3EB0C767D26A1D8F4A2B' },
          pushName: 'Ana',
          message: { conversation: 'Oi! Meu pedido já saiu?' },
          messageType: 'conversation',
          messageTimestamp: 1795341600,
        },
        destination: 'https://herald.example.com/instances/ins_01jd5q7kq4r8s2t6v0w4x8y2z6/engine/evolution',
        date_time: '2026-11-20T09:00:00.123Z',
        sender: '5511955554444@s.whatsapp.net',
        server_url: 'https://evolution.example.com',
        apikey: null,
      },
    ],
  },
);

const Published = {
  event_id: Type.String({ description: 'derived from the instance and what the event reports' }),
  deliveries: Type.Integer({ description: 'deliveries queued: one per subscribed, enabled webhook' }),
  duplicate: Type.Optional(
    Type.Literal(true, { description: 'Evolution reported this again within ENGINE_DEDUPE_S; not stored' }),
  ),
};

const EvolutionAccepted = Ok(
  {
    ...Published,
    events: Type.Array(
      Type.Object({ event: Type.String({ description: 'the Herald kind' }), ...Published }),
      {
        description:
          'every event the body made, in order (a message before its message.any); the first is the answer’s',
      },
    ),
  },
  {
    description:
      'Stored with their deliveries; Evolution posting the same body again gets the same answer. event_id and ' +
      'deliveries are the first event’s.',
  },
);

export function evolutionRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const schema = (byEvent: boolean) => ({
    tags: ['events'],
    summary: byEvent
      ? "Publish an event from Evolution API's webhook, by event (byEvents)"
      : "Publish an event from Evolution API's webhook",
    params: byEvent
      ? Type.Object({
          ...InstanceParams.properties,
          event: Type.String({
            description: 'Evolution’s event in its url form, e.g. messages-upsert; not read',
          }),
        })
      : InstanceParams,
    body: EvolutionBody,
    response: { 202: EvolutionAccepted },
    errors: [
      ...INSTANCE_ERRORS,
      'engine_jwt',
      'invalid_evolution_event',
      'engine_body_too_large',
    ] as ErrorName[],
  });
  const options = (byEvent: boolean) => ({
    ...engineBodyOptions(ctx),
    config: { engineJwt: true, publish: true },
    schema: schema(byEvent),
  });
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const instance = await loadInstance(ctx, request);
    const events = await ingestEvolution(ctx, instance.instance_id, request.body, ingestTrace(request));
    const { event: _kind, ...first } = events[0];
    return reply.status(202).send({ success: true, ...first, events });
  };
  app.post('/instances/:instance_id/engine/evolution', options(false), handler);
  app.post('/instances/:instance_id/engine/evolution/:event', options(true), handler);
}
