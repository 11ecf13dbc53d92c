/** Builds the media store MEDIA_STORE names: the data directory by default, or an S3-compatible bucket. */
import { join } from 'node:path';
import type { MediaStoreConfig } from '../config.ts';
import { FsBlobs } from './fs-blobs.ts';
import { MediaStore } from './media-store.ts';
import { S3Blobs } from './s3-blobs.ts';

/** Uploads in progress are written here first, on local disk, whatever the store (see spool.ts). */
export const spoolDir = (dataDir: string) => join(dataDir, 'media', 'tmp');

export function openMediaStore(config: MediaStoreConfig, dataDir: string): MediaStore {
  if (config.kind === 's3') {
    return new MediaStore(
      new S3Blobs({
        bucket: config.bucket,
        prefix: config.prefix,
        endpoint: config.endpoint,
        region: config.region,
        forcePathStyle: config.pathStyle,
      }),
    );
  }
  return new MediaStore(new FsBlobs(join(dataDir, 'media'), spoolDir(dataDir)));
}
