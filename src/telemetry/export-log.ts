/**
 * The exporter, told of in the log when it cannot send: OpenTelemetry itself says nothing of a collector that is
 * down or refuses, and its spans are then simply lost. One warning at the first failure, then at most one a minute,
 * with how many spans went unsent meanwhile; one line when sending works again.
 */
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { redactForeignUrl } from '../domain/redact-url.ts';

/** The part of the logger it uses (pino's). */
export interface ExportLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

const EVERY_MS = 60_000;

export class LoggedExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #logger: ExportLogger;
  readonly #url: string;
  #lost = 0;
  #warnedAt = Number.NEGATIVE_INFINITY;
  #failing = false;

  constructor(inner: SpanExporter, logger: ExportLogger, url: string) {
    this.#inner = inner;
    this.#logger = logger;
    // As logs show another's URL: no user information, no query values.
    this.#url = redactForeignUrl(url);
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.#failing) this.#logger.info({ url: this.#url }, 'traces: the collector takes spans again');
        this.#failing = false;
      } else {
        this.#failing = true;
        this.#lost += spans.length;
        const now = performance.now();
        if (now - this.#warnedAt >= EVERY_MS) {
          this.#warnedAt = now;
          this.#logger.warn(
            { url: this.#url, lost_spans: this.#lost, err: result.error?.message },
            'traces: could not send spans to the collector; they are dropped (deliveries are not affected)',
          );
          this.#lost = 0;
        }
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}
