/**
 * The storage port under media: a flat key space of immutable objects, with one adapter for the data directory
 * (fs-blobs.ts) and one for S3-compatible object stores (s3-blobs.ts). What media means (metadata, expiry,
 * sweeping) lives once in media-store.ts, above this port.
 */
import type { Readable } from 'node:stream';
import type { ByteRange } from './byte-range.ts';

export interface Blobs {
  /** Stores the complete local file at `path` under `key` (the file is consumed); readers see all or nothing. */
  putFile(key: string, path: string, size: number): Promise<void>;
  /** Stores a small object; readers see all of it or nothing. */
  putBytes(key: string, data: Buffer): Promise<void>;
  /** The whole object, or null when there is none. */
  getBytes(key: string): Promise<Buffer | null>;
  /** The object's bytes (only `range` when given), or null when there is none. */
  read(key: string, range?: ByteRange): Promise<Readable | null>;
  /** Up to `limit` keys starting with `prefix` (a "folder/"), in ascending byte order. */
  list(prefix: string, limit: number): Promise<string[]>;
  /** Removes the object; one already gone is fine. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}
