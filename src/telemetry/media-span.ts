/**
 * The span of an engine media download (media/media-jobs.ts), in the trace of the event that asked for it: the
 * download and the write to the media store, with why no file was kept when none was.
 */
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { redactForeignUrl } from '../domain/redact-url.ts';
import type { MediaJob } from '../store/records.ts';
import type { Tracing } from './tracing.ts';

export const MEDIA_SPAN = 'herald.media.download';

export interface MediaSpan {
  /** The download ended: `failure` says why no file was kept (a reason such as too_large), or null. */
  end(failure: string | null): void;
}

export function startMediaSpan(tracing: Tracing, job: MediaJob): MediaSpan {
  const span = tracing.start(
    MEDIA_SPAN,
    SpanKind.CLIENT,
    {
      'herald.instance_id': job.instance_id,
      'herald.event_id': job.event_id,
      // The query's values left out: a signed link's token must not reach the trace store.
      ...(job.url ? { 'url.full': redactForeignUrl(job.url) } : {}),
      'herald.media.try': job.tries + 1,
    },
    job.trace_context,
  );
  return {
    end(failure) {
      if (failure) {
        span.setAttribute('error.type', failure);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
      }
      span.end();
    },
  };
}
