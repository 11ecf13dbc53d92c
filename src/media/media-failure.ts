/**
 * Why an engine's media file was not stored: a bounded `reason` (the metric's label, the log's field) and the same
 * in words for a person (the log line, the delivery detail's media_failure). Receivers get none of it: their media
 * object stays `failed` or `too_large`.
 */
import type { MediaFailureReason } from '../domain/media-failures.ts';

export interface MediaFailure {
  reason: MediaFailureReason;
  detail: string;
}

/** The status the receiver's media object gets. */
export const failedStatus = (f: MediaFailure): 'failed' | 'too_large' =>
  f.reason === 'too_large' ? 'too_large' : 'failed';

/** A media.url whose spelling cannot be judged (media-prefix.ts): `why` completes "it …". */
export const refused = (why: string): MediaFailure => ({
  reason: 'refused',
  detail: `media.url refused: it ${why}`,
});

/**
 * Outside the prefixes, a media.url is downloaded from a globally reachable address only, whatever
 * ALLOW_PRIVATE_DESTINATIONS and ALLOWED_DESTINATION_CIDRS say; `where` names the prefixes, `why` the address.
 */
export const outsidePrefixes = (where: string, why: string): MediaFailure => ({
  reason: 'outside_prefixes',
  detail:
    `media.url is not under ${where}, and ${why}: a private address outside ENGINE_MEDIA_PREFIXES is never ` +
    "downloaded from (to download the engine's files, add where it serves them to ENGINE_MEDIA_PREFIXES)",
});

/** The same, when the name gave no address to check: refused, since an unchecked address may be any. */
export const unresolvedOutsidePrefixes = (where: string, host: string, code: string): MediaFailure => ({
  reason: 'outside_prefixes',
  detail:
    `media.url is not under ${where}, and ${host} could not be resolved (${code}): outside ENGINE_MEDIA_PREFIXES ` +
    'only an address checked as globally reachable is downloaded from',
});

/**
 * A non-2xx answer. 401 and 403 are nearly always a missing or wrong key (WAHA wants X-Api-Key), so they say which
 * setting sends it: `sent` names the headers ENGINE_MEDIA_HEADERS sent; `withheld` says why they were not sent
 * although set (the URL is not under ENGINE_MEDIA_PREFIXES, or the event did not come from an engine endpoint).
 */
export function statusFailure(
  status: number,
  sent: readonly string[],
  withheld: string | null = null,
): MediaFailure {
  const hint =
    status !== 401 && status !== 403
      ? ''
      : withheld !== null
        ? `: ENGINE_MEDIA_HEADERS were not sent, since ${withheld}`
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
