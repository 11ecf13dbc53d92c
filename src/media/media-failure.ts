/**
 * Why an engine's media file was not stored: a bounded `reason` (the metric's label, the log's field) and the same
 * in words for a person (the log line, the delivery detail's media_failure). Receivers get none of it: their media
 * object stays `failed` or `too_large`.
 */

export const MEDIA_FAILURE_REASONS = [
  'refused',
  'status',
  'timeout',
  'too_large',
  'engine_error',
  'connection',
  'storage',
] as const;
export type MediaFailureReason = (typeof MEDIA_FAILURE_REASONS)[number];

export interface MediaFailure {
  reason: MediaFailureReason;
  detail: string;
}

/** The status the receiver's media object gets. */
export const failedStatus = (f: MediaFailure): 'failed' | 'too_large' =>
  f.reason === 'too_large' ? 'too_large' : 'failed';

export const refused = (why: string): MediaFailure => ({
  reason: 'refused',
  detail: `the destination guard refused media.url: ${why}`,
});

/**
 * A non-2xx answer. 401 and 403 are nearly always a missing or wrong key (WAHA wants X-Api-Key), so they say which
 * setting sends it; `sent` names the headers ENGINE_MEDIA_HEADERS sends now.
 */
export function statusFailure(status: number, sent: readonly string[]): MediaFailure {
  const hint =
    status !== 401 && status !== 403
      ? ''
      : sent.length === 0
        ? ': set ENGINE_MEDIA_HEADERS, e.g. X-Api-Key: <WAHA_API_KEY>'
        : `: check the ${sent.join(', ')} that ENGINE_MEDIA_HEADERS sends`;
  return { reason: 'status', detail: `the engine answered ${status}${hint}` };
}

export const timedOut = (ms: number): MediaFailure => ({
  reason: 'timeout',
  detail: `timeout after ${ms} ms`,
});

export const tooLarge = (maxBytes: number): MediaFailure => ({
  reason: 'too_large',
  detail: `too large: more than ${maxBytes} bytes`,
});

export const engineError = (text: string): MediaFailure => ({
  reason: 'engine_error',
  detail: `the engine could not download it: ${text}`,
});

export const connectionFailed = (message: string): MediaFailure => ({
  reason: 'connection',
  detail: `the connection to the engine failed: ${message}`,
});

/** A fault of Herald's own (its media store unreachable, its disk full) that outlasted every try. */
export const storageFailed = (tries: number, message: string): MediaFailure => ({
  reason: 'storage',
  detail: `Herald could not store it (${tries} tries): ${message}`,
});
