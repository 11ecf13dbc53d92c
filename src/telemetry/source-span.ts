/**
 * The span of one message a queue source consumed (RabbitMQ, NATS, Redis Streams), for the sources' ingress to call:
 * a CONSUMER span that continues the message's own `traceparent` when it carries one, around the ingest of the
 * message. The ingest gets the trace context to store with its events (publishEvents' `trace`), so that their
 * attempts join this trace as an HTTP publish's do. With tracing off (`tracing` null) the ingest runs alone, with
 * null, and nothing else happens.
 *
 *   await withSourceSpan(tracing, { system: 'rabbitmq', source: queue, traceparent: headers.traceparent },
 *     (trace) => publishEvents(ctx, instanceId, items, { prefix, trace }));
 *   // then acknowledge the message
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { type Tracing, traceparentOf } from './tracing.ts';

export const SOURCE_SPAN = 'herald.source.message';

export interface SourceMessage {
  /** messaging.system: the broker the message came from. */
  system: 'rabbitmq' | 'nats' | 'redis';
  /** The queue, subject or stream it was read from (messaging.destination.name). */
  source: string;
  /** The W3C traceparent the message carried (a header, or a Redis entry's field), if any. */
  traceparent?: string | null;
  /** The instance its events go to, when known before the ingest. */
  instanceId?: string;
}

export async function withSourceSpan<T>(
  tracing: Tracing | null | undefined,
  message: SourceMessage,
  ingest: (trace: string | null) => Promise<T>,
): Promise<T> {
  if (!tracing) return ingest(null);
  const span = tracing.start(
    SOURCE_SPAN,
    SpanKind.CONSUMER,
    {
      'messaging.system': message.system,
      'messaging.destination.name': message.source,
      'messaging.operation.type': 'process',
      ...(message.instanceId ? { 'herald.instance_id': message.instanceId } : {}),
    },
    message.traceparent ?? null,
  );
  try {
    return await ingest(traceparentOf(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
