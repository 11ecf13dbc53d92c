/**
 * Stored media files and what Herald knows about them, kept beside the bytes rather than in the database:
 *   files/{media_id}            the bytes
 *   meta/{media_id}.json        MediaMeta (mimetype, size, sha256, instance, created/expires, filename)
 *   expiry/{ms}-{media_id}      an empty marker; its name orders files by expiry, so the sweeper reads only what
 *                               is due, in small batches, on a directory and on S3 alike (keys list in order)
 * The metadata is written last and removed first: a file is visible exactly while its metadata exists.
 */
import type { Readable } from 'node:stream';
import type { Blobs } from './blobs.ts';
import type { ByteRange } from './byte-range.ts';

export interface MediaMeta {
  media_id: string;
  instance_id: string;
  mimetype: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  created_at: number;
  /** Until when some link to it may be followed; the file is deleted after this (and the grace below). */
  expires_at: number;
  /** The engine's name for it (a document's), given to a browser that saves it; absent for uploads. */
  filename?: string;
}

/**
 * The sweeper deletes a file only this long after its expiry. An ingest that extends a file's life reads its
 * metadata while it is still live; the grace makes a sweep that read the old expiry before that write and
 * deletes after it impossible in practice, without a lock across machines.
 */
export const SWEEP_GRACE_MS = 5 * 60_000;

const MEDIA_ID = /^med_[0-9a-z]{10,64}$/;
const file = (id: string) => `files/${id}`;
const meta = (id: string) => `meta/${id}.json`;
const marker = (at: number, id: string) => `expiry/${String(at).padStart(15, '0')}-${id}`;

export class MediaStore {
  readonly blobs: Blobs;

  constructor(blobs: Blobs) {
    this.blobs = blobs;
  }

  /** Stores a complete local file (consumed) and its metadata. */
  async put(path: string, m: MediaMeta): Promise<void> {
    // Marker first: should the process die before the metadata is written, the sweeper still finds the bytes.
    await this.blobs.putBytes(marker(m.expires_at, m.media_id), Buffer.alloc(0));
    await this.blobs.putFile(file(m.media_id), path, m.size);
    await this.blobs.putBytes(meta(m.media_id), Buffer.from(JSON.stringify(m)));
  }

  /** The metadata of a stored file, or null (unknown id, malformed id, or deleted). */
  async get(mediaId: string): Promise<MediaMeta | null> {
    if (!MEDIA_ID.test(mediaId)) return null;
    const raw = await this.blobs.getBytes(meta(mediaId));
    return raw ? (JSON.parse(raw.toString('utf8')) as MediaMeta) : null;
  }

  read(mediaId: string, range?: ByteRange): Promise<Readable | null> {
    return this.blobs.read(file(mediaId), range);
  }

  /** Keeps the file at least until `until` (a new link to it was handed out). */
  async extend(m: MediaMeta, until: number): Promise<MediaMeta> {
    if (until <= m.expires_at) return m;
    const next = { ...m, expires_at: until };
    await this.blobs.putBytes(marker(until, m.media_id), Buffer.alloc(0));
    await this.blobs.putBytes(meta(m.media_id), Buffer.from(JSON.stringify(next)));
    return next;
  }

  /**
   * Deletes up to `batch` files whose expiry (plus grace) has passed by `now`; returns how many markers it
   * handled, so a caller can run batch after batch until fewer come back. The marker of a file whose life was
   * extended is simply dropped: a later marker stands for it.
   */
  async sweep(now: number, batch: number): Promise<{ markers: number; deleted: string[] }> {
    const keys = await this.blobs.list('expiry/', batch);
    const deleted: string[] = [];
    let markers = 0;
    for (const key of keys) {
      const m = /^expiry\/(\d{15})-(med_[0-9a-z]+)$/.exec(key);
      if (m && Number(m[1]) + SWEEP_GRACE_MS > now) break; // markers are in expiry order: the rest are later
      markers++;
      if (m) {
        const current = await this.get(m[2]);
        if (!current || current.expires_at <= Number(m[1])) {
          await this.delete(m[2]);
          deleted.push(m[2]);
        }
      }
      await this.blobs.delete(key);
    }
    return { markers, deleted };
  }

  /** Removes a file now (metadata first, so it stops being visible before its bytes go). */
  async delete(mediaId: string): Promise<void> {
    await this.blobs.delete(meta(mediaId));
    await this.blobs.delete(file(mediaId));
  }

  close(): Promise<void> {
    return this.blobs.close();
  }
}
