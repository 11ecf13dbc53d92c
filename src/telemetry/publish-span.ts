/**
 * The SERVER span of a publish request. A route opts in with `config: { publish: true }`; its span continues the
 * publisher's `traceparent` and ends with the answer. The route hands `ingestTrace(request)` to ingest, which stores
 * it with each event, so that every attempt of every delivery of the event joins this trace, whenever and wherever
 * it is made.
 */
import { type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Tracing, traceparentOf } from './tracing.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route publishes events: it gets a SERVER span, and its events carry the span's trace (publish-span.ts). */
    publish?: boolean;
  }
}

const spans = new WeakMap<FastifyRequest, Span>();

/** The trace context to store with the events a request publishes: its span's traceparent, or null (tracing off). */
export function ingestTrace(request: FastifyRequest): string | null {
  const span = spans.get(request);
  return span ? traceparentOf(span) : null;
}

/** Installs the hooks, for a Herald that traces. */
export function installPublishSpans(app: FastifyInstance, tracing: Tracing): void {
  app.addHook('onRequest', async (request) => {
    if (!request.routeOptions.config?.publish) return;
    const route = request.routeOptions.url ?? request.url;
    const header = request.headers.traceparent;
    const parent = (Array.isArray(header) ? header[0] : header) ?? null;
    const instanceId = (request.params as { instance_id?: string } | undefined)?.instance_id;
    const span = tracing.start(
      `${request.method} ${route}`,
      SpanKind.SERVER,
      {
        'http.request.method': request.method,
        'http.route': route,
        'url.path': request.url.split('?')[0],
        ...(instanceId ? { 'herald.instance_id': instanceId } : {}),
      },
      parent,
    );
    spans.set(request, span);
  });
  app.addHook('onResponse', async (request, reply) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute('http.response.status_code', reply.statusCode);
    if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  app.addHook('onRequestAbort', async (request) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
    span.end();
  });
}
