/**
 * Blobs in a directory (DATA_DIR/media by default). Every write goes to a temporary file in the same file system,
 * is fsynced, then renamed into place: a crash leaves either the whole object or none, never half of one.
 */
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { randomToken } from '../domain/ids.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../private-files.ts';
import type { Blobs } from './blobs.ts';
import type { ByteRange } from './byte-range.ts';

const isMissing = (err: unknown) => (err as { code?: string }).code === 'ENOENT';

export class FsBlobs implements Blobs {
  readonly #root: string;
  readonly #tmp: string;

  /** `tmpDir` must be on the same file system as `root`, so that a rename is atomic. */
  constructor(root: string, tmpDir: string) {
    this.#root = root;
    this.#tmp = tmpDir;
  }

  #path(key: string): string {
    // Keys are built by media-store.ts from checked ids; refusing any other shape keeps a path inside the root.
    if (!/^[a-z]+\/[A-Za-z0-9_.-]+$/.test(key)) throw new Error(`invalid blob key ${key}`);
    return join(this.#root, key);
  }

  async putFile(key: string, path: string): Promise<void> {
    const target = this.#path(key);
    await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
    await rename(path, target);
  }

  async putBytes(key: string, data: Buffer): Promise<void> {
    const target = this.#path(key);
    await mkdir(this.#tmp, { recursive: true, mode: PRIVATE_DIR_MODE });
    const tmp = join(this.#tmp, `${randomToken(12)}.part`);
    const file = await open(tmp, 'wx', PRIVATE_FILE_MODE);
    try {
      await file.writeFile(data);
      await file.sync();
    } finally {
      await file.close();
    }
    await mkdir(dirname(target), { recursive: true, mode: PRIVATE_DIR_MODE });
    await rename(tmp, target);
  }

  async getBytes(key: string): Promise<Buffer | null> {
    return readFile(this.#path(key)).catch((err) => {
      if (isMissing(err)) return null;
      throw err;
    });
  }

  async read(key: string, range?: ByteRange): Promise<Readable | null> {
    const path = this.#path(key);
    // Opened before the stream is handed out, so a missing file is a null here and not an error mid-response.
    const file = await open(path, 'r').catch((err) => {
      if (isMissing(err)) return null;
      throw err;
    });
    if (!file) return null;
    return file.createReadStream({ start: range?.start, end: range?.end });
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    const names = await readdir(join(this.#root, prefix)).catch((err) => {
      if (isMissing(err)) return [] as string[];
      throw err;
    });
    return names
      .filter((n) => !n.startsWith('.'))
      .sort()
      .slice(0, limit)
      .map((n) => prefix + n);
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }

  async close(): Promise<void> {}
}
