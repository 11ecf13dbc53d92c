/**
 * Blobs in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …) through the AWS SDK v3, for deployments with
 * several machines. A PutObject becomes visible only once complete, so no reader ever sees half an object.
 */
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { Blobs } from './blobs.ts';
import type { ByteRange } from './byte-range.ts';

export interface S3BlobsOptions {
  bucket: string;
  /** Key prefix ending in "/", or "". */
  prefix: string;
  /** null: the SDK's default endpoint for the region (AWS). */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
}

const isMissing = (err: unknown) => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

export class S3Blobs implements Blobs {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(o: S3BlobsOptions) {
    this.#bucket = o.bucket;
    this.#prefix = o.prefix;
    // Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, roles).
    // Checksums only where S3 requires them: the newer default (CRC trailers) is refused by many compatible stores.
    this.#client = new S3Client({
      region: o.region,
      forcePathStyle: o.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    });
  }

  async putFile(key: string, path: string, size: number): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#prefix + key,
        Body: createReadStream(path),
        ContentLength: size,
      }),
    );
    await rm(path, { force: true });
  }

  async putBytes(key: string, data: Buffer): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: this.#prefix + key,
        Body: data,
        ContentLength: data.length,
      }),
    );
  }

  async getBytes(key: string): Promise<Buffer | null> {
    const body = await this.#get(key);
    return body ? Buffer.from(await body.transformToByteArray()) : null;
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    return (await this.#get(key, range)) as unknown as Readable | null;
  }

  async #get(key: string, range?: ByteRange) {
    try {
      const res = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#prefix + key,
          ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
        }),
      );
      return res.Body ?? null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    const res = await this.#client.send(
      new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix + prefix, MaxKeys: limit }),
    );
    return (res.Contents ?? []).map((o) => (o.Key as string).slice(this.#prefix.length));
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}
