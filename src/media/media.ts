/**
 * Media as the API uses it: uploads (streamed into storage), completing a published payload's media object
 * with a signed link, and the lifetime rules (a link lives MEDIA_TTL from ingest; the file at least as long).
 */
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Clock } from '../domain/clock.ts';
import { newId } from '../domain/ids.ts';
import { signLink } from '../domain/media-link.ts';
import { completeMedia, fileless, readyMedia, referencedMediaId } from '../domain/media-object.ts';
import type { FieldError, MediaDownload } from '../domain/types.ts';
import type { EngineFetch } from './engine-fetch.ts';
import { engineError, failedStatus, type MediaFailure } from './media-failure.ts';
import type { MediaMeta, MediaStore } from './media-store.ts';
import { type Spooled, spool } from './spool.ts';

export interface MediaOptions {
  store: MediaStore;
  /** HMAC key of the download links (media-link.ts). */
  linkKey: Buffer;
  ttlMs: number;
  maxBytes: number;
  /** Local directory for uploads in progress. */
  spoolDir: string;
  /** PUBLIC_URL, or http://HOST:PORT once the port is bound. */
  baseUrl: () => string;
  clock: Clock;
  /** Downloads engine media (engine-fetch.ts). */
  engineFetch: EngineFetch;
}

/** Engine media settled: the object every delivery of its event carries, and why no file was kept, if none was. */
export interface SettledMedia {
  media: Record<string, unknown>;
  failure: MediaFailure | null;
}

/** A download with what decides where it may go: its event's way in, and its instance's engine_media_prefix. */
export type EngineDownload = MediaDownload & { engine_media_prefix?: string | null };

/** The kinds whose payload may carry a media object. */
const MEDIA_KINDS = new Set(['message', 'message.any']);
/** type/subtype with optional parameters (RFC 9110 §8.3), e.g. `audio/ogg; codecs=opus`. */
const MEDIA_TYPE =
  /^[A-Za-z0-9][\w!#$&^.+-]*\/[A-Za-z0-9][\w!#$&^.+-]*(\s*;\s*[\w!#$&^.+-]+=("[^"]*"|[\w!#$&^.+-]+))*$/;

export class Media {
  readonly store: MediaStore;
  readonly #options: MediaOptions;
  /** Downloads under way, by what they fetch: one file shown by several events is downloaded once. */
  readonly #downloads = new Map<string, Promise<SettledMedia>>();

  constructor(options: MediaOptions) {
    this.#options = options;
    this.store = options.store;
  }

  get linkKey(): Buffer {
    return this.#options.linkKey;
  }

  /** The rule a Content-Type breaks, or null. Absent means application/octet-stream. */
  static checkType(contentType: string): string | null {
    return contentType.length <= 255 && MEDIA_TYPE.test(contentType)
      ? null
      : 'must be a media type such as image/jpeg or audio/ogg; codecs=opus';
  }

  /**
   * Streams an upload into storage. Throws TooLarge beyond MEDIA_MAX_BYTES, Stopped when `stop` fires first;
   * either way nothing is kept.
   */
  async upload(
    instanceId: string,
    source: Readable,
    mimetype: string,
    stop?: AbortSignal,
  ): Promise<MediaMeta> {
    const spooled = await spool(source, this.#options.spoolDir, this.#options.maxBytes, stop);
    // Until an event refers to it, an upload lives one TTL; each event that does keeps it one TTL past itself.
    return this.#keep(spooled, instanceId, mimetype);
  }

  /**
   * Downloads an engine's file into storage (unless the engine said it could not get it) and returns the media
   * object every delivery of its event carries: ready with Herald's own signed link, or too_large / failed without
   * a file, with why.
   */
  async fetchEngineMedia(instanceId: string, download: EngineDownload): Promise<SettledMedia> {
    if (download.engine_error) return this.#fetchEngineMedia(instanceId, download);
    // The events of one engine post that show one file (Evolution's message and message.any) are settled together,
    // by one download into one stored file.
    const key = JSON.stringify([
      instanceId,
      download.url,
      download.via_engine === true,
      download.engine_media_prefix,
    ]);
    const running = this.#downloads.get(key);
    if (running) return running;
    const run = this.#fetchEngineMedia(instanceId, download).finally(() => this.#downloads.delete(key));
    this.#downloads.set(key, run);
    return run;
  }

  async #fetchEngineMedia(instanceId: string, download: EngineDownload): Promise<SettledMedia> {
    const got = download.engine_error
      ? ({ kind: 'failed', failure: engineError(download.engine_error) } as const)
      : await this.#options.engineFetch.fetch(download.url, {
          viaEngine: download.via_engine === true,
          instancePrefix: download.engine_media_prefix ?? null,
        });
    if (got.kind !== 'file') {
      return { media: fileless(failedStatus(got.failure), download.mimetype), failure: got.failure };
    }
    const type = download.mimetype ?? got.contentType?.trim() ?? '';
    const meta = await this.#keep(
      got.file,
      instanceId,
      Media.checkType(type) ? 'application/octet-stream' : type,
      download.filename,
    );
    const link = signLink(this.#options.linkKey, this.#options.baseUrl(), meta.media_id, meta.expires_at);
    return { media: readyMedia({ ...meta, ...link }, download.filename), failure: null };
  }

  /**
   * Stores a file an engine sent inline (Evolution's `base64`) and returns the media object every delivery of its
   * events carries: ready with Herald's own signed link, or too_large (nothing kept) beyond MEDIA_MAX_BYTES.
   */
  async storeInline(
    instanceId: string,
    bytes: Buffer,
    mimetype: string | null,
    filename: string | null,
  ): Promise<Record<string, unknown>> {
    const type =
      mimetype !== null && Media.checkType(mimetype) === null ? mimetype : 'application/octet-stream';
    if (bytes.length > this.#options.maxBytes) return fileless('too_large', mimetype);
    const spooled = await spool(Readable.from([bytes]), this.#options.spoolDir, this.#options.maxBytes);
    const meta = await this.#keep(spooled, instanceId, type, filename);
    const link = signLink(this.#options.linkKey, this.#options.baseUrl(), meta.media_id, meta.expires_at);
    return readyMedia({ ...meta, ...link }, filename);
  }

  /** Moves a spooled file into storage; it lives one TTL from now. */
  async #keep(
    spooled: Spooled,
    instanceId: string,
    mimetype: string,
    filename: string | null = null,
  ): Promise<MediaMeta> {
    const now = this.#options.clock();
    const meta: MediaMeta = {
      media_id: newId('med', now),
      instance_id: instanceId,
      mimetype,
      size: spooled.size,
      sha256: spooled.sha256,
      created_at: now,
      expires_at: now + this.#options.ttlMs,
      ...(filename === null ? {} : { filename }),
    };
    // A store that fails (S3 unreachable) leaves no temporary file behind either.
    await this.store.put(spooled.path, meta).catch(async (err) => {
      await rm(spooled.path, { force: true });
      throw err;
    });
    return meta;
  }

  /**
   * The payload with its media object completed (media-object.ts), or the field error of a reference that
   * cannot be served: unknown, another instance's, or already expired.
   */
  async complete(
    instanceId: string,
    kind: string,
    payload: Record<string, unknown>,
    now: number,
    prefix: string,
  ): Promise<{ payload: Record<string, unknown> } | { error: FieldError }> {
    if (!MEDIA_KINDS.has(kind)) return { payload };
    const id = referencedMediaId(payload);
    if (id === null) return { payload };
    const field = `${prefix}payload.media.media_id`;
    const meta = await this.store.get(id);
    // Another instance's file is reported as unknown, so ids of other instances do not leak.
    if (!meta || meta.instance_id !== instanceId) {
      return { error: { field, message: `must be a media_id uploaded to this instance; ${id} is unknown` } };
    }
    if (meta.expires_at <= now) {
      return { error: { field, message: `media ${id} has expired; upload the file again` } };
    }
    const link = signLink(this.#options.linkKey, this.#options.baseUrl(), id, now + this.#options.ttlMs);
    await this.store.extend(meta, Date.parse(link.expires_at));
    return { payload: completeMedia(payload, { ...meta, ...link }) };
  }
}

/** When a delivery body's media link stops working, or null when it carries none of Herald's links. */
export function mediaLinkExpiry(body: string): number | null {
  try {
    const media = JSON.parse(body)?.payload?.media;
    if (media?.status !== 'ready' || typeof media.expires_at !== 'string') return null;
    const at = Date.parse(media.expires_at);
    return Number.isNaN(at) ? null : at;
  } catch {
    return null;
  }
}
