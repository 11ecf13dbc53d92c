/**
 * The media object of a message payload as Herald delivers it. Pure: the caller looks uploads up,
 * downloads the engine's files and signs links.
 *   { media_id }                           → a file uploaded to Herald: becomes ready (completeMedia)
 *   { status, … }                          → Herald's own terms: passed on, expires_at in UTC
 *   { url, mimetype, filename? }           → the engine's file server (WAHA): a download, settled after it
 *   { …, error }                           → failed; its job only records why
 *   media null / absent with hasMedia true → unavailable
 * A message the session sent (fromMe true) keeps no copy: its media is outgoing, whatever it says.
 */
import { toUtc } from './iso-time.ts';
import { isObj, type Obj, present } from './payload-rules.ts';
import type { MediaDownload } from './types.ts';

/** True for a reference to an uploaded file: a media_id, no url, mimetype or expires_at, status absent or ready. */
export function isReference(media: Obj): boolean {
  return (
    present(media.media_id) &&
    !present(media.url) &&
    !present(media.mimetype) &&
    !present(media.expires_at) &&
    (!present(media.status) || media.status === 'ready')
  );
}

/** The media_id an (already validated) payload refers to, or null when it refers to no upload. */
export function referencedMediaId(payload: Obj): string | null {
  const media = payload.media;
  if (!isObj(media) || payload.fromMe === true || !isReference(media)) return null;
  return media.media_id as string;
}

export interface ReadyMedia {
  media_id: string;
  mimetype: string;
  size: number;
  sha256: string;
  url: string;
  expires_at: string;
}

/** Longest engine error kept: a stack trace says nothing more to the reader of a delivery. */
const MAX_ERROR_CHARS = 300;

/**
 * The engine's `error` in words: a string as it is, else its `message`, else the first line of its `details`
 * (GOWS sends a gRPC error whose details begin with the message and go on with a stack), else its JSON.
 */
export function engineErrorText(error: unknown): string {
  const o = isObj(error) ? error : {};
  const line = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim().split('\n')[0] : null);
  const text = line(error) ?? line(o.message) ?? line(o.details) ?? JSON.stringify(error) ?? String(error);
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text;
}

/**
 * The ready object. Beyond url, media_id and expires_at it carries `size` and `sha256`, so a receiver can check its
 * download, and the engine's `filename` of a document.
 */
export function readyMedia(ready: ReadyMedia, filename: string | null = null): Obj {
  return {
    status: 'ready',
    mimetype: ready.mimetype,
    media_id: ready.media_id,
    url: ready.url,
    expires_at: ready.expires_at,
    size: ready.size,
    sha256: ready.sha256,
    ...(filename === null ? {} : { filename }),
  };
}

/** A media object without a file: its status, and its type when known. */
export function fileless(status: string, mimetype: unknown): Obj {
  return typeof mimetype === 'string' && mimetype !== '' ? { status, mimetype } : { status };
}

/** The payload with `media` replaced (a fresh object: the published payload is not changed in place). */
export const withMedia = (payload: Obj, media: Obj): Obj => ({ ...payload, media });

/** The payload with the upload it refers to completed as ready. */
export function completeMedia(payload: Obj, ready: ReadyMedia | null): Obj {
  return ready ? withMedia(payload, readyMedia(ready)) : payload;
}

/**
 * The payload's media as Herald delivers it, except uploads (completeMedia) and the engine's files, which come
 * back as a download to make: until it is settled, the payload keeps the engine's object.
 */
export function settleMedia(payload: Obj): { payload: Obj; download: MediaDownload | null } {
  const media = payload.media;
  if (!present(media)) {
    if (payload.hasMedia !== true) return { payload, download: null };
    return {
      payload: withMedia(payload, fileless(payload.fromMe === true ? 'outgoing' : 'unavailable', null)),
      download: null,
    };
  }
  const m = media as Obj;
  if (present(m.status)) {
    const utc = typeof m.expires_at === 'string' ? toUtc(m.expires_at) : null;
    const same = utc === null || utc === m.expires_at;
    return { payload: same ? payload : withMedia(payload, { ...m, expires_at: utc }), download: null };
  }
  if (payload.fromMe === true) {
    return { payload: withMedia(payload, fileless('outgoing', m.mimetype)), download: null };
  }
  if (isReference(m)) return { payload, download: null };
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
  if (present(m.error)) {
    // Failed already; the job that settles it records why (media-jobs.ts), as for a download that fails.
    return {
      payload: withMedia(payload, fileless('failed', m.mimetype)),
      download: {
        url: text(m.url) ?? '',
        mimetype: text(m.mimetype),
        filename: text(m.filename),
        engine_error: engineErrorText(m.error),
      },
    };
  }
  if (!present(m.url)) return { payload: withMedia(payload, fileless('unavailable', null)), download: null };
  return {
    payload,
    download: { url: m.url as string, mimetype: text(m.mimetype), filename: text(m.filename) },
  };
}
