/**
 * The `herald.attempt` span of each delivery attempt, in the trace its event was ingested in (the traceparent stored
 * with the event and read with the claim), CLIENT for HTTP and PRODUCER for a broker. The span is named before the
 * attempt is made, so that the attempt carries a traceparent naming it (`begin`); it is made once the attempt's
 * outcome is decided (`end`), with the attempt's own start and duration. An attempt that never started makes no
 * span: its name is simply dropped.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { destinationKind } from '../domain/destination-kind.ts';
import { eventKindOf } from '../domain/event-body.ts';
import type { Decision } from '../domain/retry-policy.ts';
import type { AttemptOutcome } from '../domain/types.ts';
import type { ClaimedDelivery } from '../store/records.ts';
import type { SpanIds, Tracing } from './tracing.ts';

export const ATTEMPT_SPAN = 'herald.attempt';

/** An attempt's span, named and not yet made. */
export interface AttemptTrace {
  ids: SpanIds;
  /** What the attempt carries (an HTTP header, a broker message's header, a Redis entry's field). */
  traceparent: string;
}

/** messaging.system by broker kind. */
const SYSTEMS = { amqp: 'rabbitmq', nats: 'nats', redis: 'redis' } as const;

/** What the decision made of the attempt: herald.outcome. */
export function attemptOutcome(decision: Decision): 'delivered' | 'retry' | 'failed' | 'disabled' {
  if (decision.kind !== 'failed') return decision.kind;
  return decision.disableWebhook ? 'disabled' : 'failed';
}

export class AttemptSpans {
  readonly #tracing: Tracing;

  constructor(tracing: Tracing) {
    this.#tracing = tracing;
  }

  begin(claim: ClaimedDelivery): AttemptTrace {
    return this.#tracing.nameSpan(ATTEMPT_SPAN, kindOf(claim), claim.trace_context);
  }

  end(trace: AttemptTrace, claim: ClaimedDelivery, outcome: AttemptOutcome, decision: Decision): void {
    const destination = destinationKind(claim.destination_url);
    const broker = destination !== null && destination !== 'http' ? SYSTEMS[destination] : null;
    const span = this.#tracing.startNamed(
      trace.ids,
      ATTEMPT_SPAN,
      broker ? SpanKind.PRODUCER : SpanKind.CLIENT,
      {
        'herald.instance_id': claim.instance_id,
        'herald.event_id': claim.event_id,
        'herald.event': eventKindOf(claim.body),
        'herald.webhook_id': claim.webhook_id,
        'herald.delivery_id': claim.delivery_id,
        // Its number in the cycle the retry policy counts (1…6 by default); a redelivery starts a cycle again.
        'herald.attempt': claim.cycle_attempt,
        'herald.outcome': attemptOutcome(decision),
        ...(broker
          ? { 'messaging.system': broker }
          : outcome.status_code !== null
            ? { 'http.response.status_code': outcome.status_code }
            : {}),
        ...(outcome.error ? { 'error.type': outcome.error } : {}),
      },
      claim.trace_context,
      outcome.started_at,
    );
    if (decision.kind !== 'delivered') {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: outcome.error ?? (outcome.status_code !== null ? `HTTP ${outcome.status_code}` : 'failed'),
      });
    }
    span.end(outcome.started_at + outcome.duration_ms);
  }
}

const kindOf = (claim: ClaimedDelivery): SpanKind =>
  destinationKind(claim.destination_url) === 'http' ? SpanKind.CLIENT : SpanKind.PRODUCER;
