/** Builds the media store MEDIA_STORE names: the data directory by default, or an S3-compatible bucket. */
import { join } from 'node:path';
import type { MediaStoreConfig } from '../config.ts';
import { FsBlobs } from './fs-blobs.ts';
import { MediaStore } from './media-store.ts';

/** Uploads in progress are written here first, on local disk, whatever the store (see spool.ts). */
export const spoolDir = (dataDir: string) => join(dataDir, 'media', 'tmp');

/** The S3 adapter is loaded only when configured: the AWS SDK alone adds ~40 MB to every process that imports it. */
export async function openMediaStore(config: MediaStoreConfig, dataDir: string): Promise<MediaStore> {
  if (config.kind === 's3') {
    const { S3Blobs } = await import('./s3-blobs.ts');
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
