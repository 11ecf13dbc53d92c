/**
 * Why an engine's media file was not stored, as a bounded word: the media failure's `reason` (media/media-failure.ts),
 * which the log line and the delivery detail carry, and the label of the metric that counts them.
 */
export const MEDIA_FAILURE_REASONS = [
  'refused',
  'outside_prefixes',
  'status',
  'timeout',
  'too_large',
  'engine_error',
  'connection',
  'storage',
] as const;
export type MediaFailureReason = (typeof MEDIA_FAILURE_REASONS)[number];
