/**
 * Tracing, when it is on: one OpenTelemetry TracerProvider per Herald, its spans batched and sent over OTLP/HTTP
 * (protobuf or JSON). Nothing is registered globally: each span is started with its parent given explicitly (a
 * W3C traceparent, as a request brought it or as the event stored it), so that several Heralds in one process
 * (tests) keep their own settings, and no code that is not Herald's is traced. When tracing is off there is no
 * Tracing at all: the span sites hold null, and do nothing.
 */
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanKind,
  trace,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { type ExportLogger, LoggedExporter } from './export-log.ts';
import type { SamplerName, TracingConfig } from './tracing-config.ts';

/** How long a stop waits for the last spans to be sent. */
const SHUTDOWN_MS = 5000;

/** A span's ids chosen before it starts: an attempt names its span in its traceparent before the span is made. */
export interface SpanIds {
  traceId: string;
  spanId: string;
}

export class Tracing {
  readonly #provider: TracerProvider;
  readonly #tracer: ReturnType<TracerProvider['getTracer']>;
  readonly #sampler: Sampler;
  readonly #ids = new PresetIds();

  constructor(config: TracingConfig, version: string, logger: ExportLogger) {
    this.#sampler = samplerOf(config.sampler, config.ratio);
    const otlp =
      config.protocol === 'http/json'
        ? new JsonExporter({ url: config.url })
        : new ProtobufExporter({ url: config.url });
    const exporter = new LoggedExporter(otlp, logger, config.url);
    this.#provider = new TracerProvider({
      // The SDK's own (telemetry.sdk.*), then Herald's and the operator's.
      resource: defaultResource().merge(
        resourceFromAttributes({ 'service.version': version, ...config.resource }),
      ),
      sampler: this.#sampler,
      idGenerator: this.#ids,
      spanProcessors: [
        new BatchSpanProcessor({
          exporter,
          scheduledDelayMillis: config.scheduleDelayMs,
          maxQueueSize: config.maxQueueSize,
          maxExportBatchSize: Math.min(512, config.maxQueueSize),
        }),
      ],
    });
    this.#tracer = this.#provider.getTracer('herald', version);
  }

  /** A span under `parent` (a traceparent, or null for a new trace). */
  start(
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    parent: string | null,
    startTime?: number,
  ): Span {
    return this.#tracer.startSpan(name, { kind, attributes, startTime }, contextOf(parent));
  }

  /** A span with the ids it was named by beforehand (`ids`, from `nameSpan`), started at `startTime`. */
  startNamed(
    ids: SpanIds,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    parent: string | null,
    startTime: number,
  ): Span {
    this.#ids.preset(ids);
    try {
      return this.#tracer.startSpan(name, { kind, attributes, startTime }, contextOf(parent));
    } finally {
      this.#ids.preset(null);
    }
  }

  /**
   * Ids and a traceparent for a span that will be started later (startNamed), under `parent`. Its sampled flag is
   * the sampler's decision now, which every sampler here makes the same later (they read only the parent's flag
   * and the trace id).
   */
  nameSpan(name: string, kind: SpanKind, parent: string | null): { ids: SpanIds; traceparent: string } {
    const context = contextOf(parent);
    const traceId = trace.getSpanContext(context)?.traceId ?? this.#ids.random.generateTraceId();
    const spanId = this.#ids.random.generateSpanId();
    const decision = this.#sampler.shouldSample(context, traceId, name, kind, {}, []).decision;
    const sampled = decision === SamplingDecision.RECORD_AND_SAMPLED;
    return { ids: { traceId, spanId }, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
  }

  /** Sends what is waiting and stops; a collector that does not answer holds a stop SHUTDOWN_MS at most. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#provider.shutdown().catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_MS);
      }),
    ]);
    clearTimeout(timer);
  }
}

/** A span's W3C traceparent, as the next hop continues it; null for a span that carries no trace. */
export function traceparentOf(span: Span): string | null {
  const c = span.spanContext();
  if (!trace.isSpanContextValid(c)) return null;
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`;
}

/** The context a traceparent names (its span remote), or the root when there is none or it is malformed. */
function contextOf(traceparent: string | null): Context {
  if (!traceparent) return ROOT_CONTEXT;
  const parent = parseTraceParent(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
}

function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = name.endsWith('always_on')
    ? new AlwaysOnSampler()
    : name.endsWith('always_off')
      ? new AlwaysOffSampler()
      : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
}

/** Random ids, but those preset for the one span being started (startNamed: synchronous, so never shared). */
class PresetIds implements IdGenerator {
  readonly random = new RandomIdGenerator();
  #next: SpanIds | null = null;

  preset(ids: SpanIds | null): void {
    this.#next = ids;
  }

  generateTraceId(): string {
    return this.#next?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.#next?.spanId ?? this.random.generateSpanId();
  }
}
