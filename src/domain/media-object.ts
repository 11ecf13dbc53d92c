/**
 * The media object of a message payload (seed 2.5, SPEC §7) as Herald completes it at ingest. Pure: the caller
 * looks the uploaded file up and signs its link.
 *   { media_id }                      → a file uploaded to Herald: becomes ready, with mimetype, url, expires_at
 *   { status: 'outgoing' } or {} when fromMe → outgoing, no copy kept, no url
 *   { status: too_large | failed | unavailable, mimetype? } → passed on as given, no url
 *   { status: 'ready', url, … }       → the engine's own store: passed on unchanged
 */
type Obj = Record<string, unknown>;

const present = (v: unknown): boolean => v !== undefined && v !== null;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/**
 * The payload with its media object completed. `ready` is the looked-up upload when the payload refers to one.
 * Beyond the seed's fields a ready object carries `size` and `sha256`, so a receiver can check its download.
 */
export function completeMedia(payload: Obj, ready: ReadyMedia | null): Obj {
  const media = payload.media;
  if (!isObj(media)) return payload;
  if (ready) {
    return {
      ...payload,
      media: {
        status: 'ready',
        mimetype: ready.mimetype,
        media_id: ready.media_id,
        url: ready.url,
        expires_at: ready.expires_at,
        size: ready.size,
        sha256: ready.sha256,
      },
    };
  }
  if (payload.fromMe === true && !present(media.status)) {
    return { ...payload, media: { status: 'outgoing', ...media } };
  }
  return payload;
}
