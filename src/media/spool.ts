/**
 * Receives an upload into a private temporary file, hashing and counting as the bytes pass: never the whole file
 * in memory, and refused the moment it passes the limit, whatever Content-Length said (or did not say).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { randomToken } from '../domain/ids.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../private-files.ts';

export interface Spooled {
  path: string;
  size: number;
  sha256: string;
}

export class TooLarge extends Error {}

/** The upload was cut short because Herald is stopping (see `spool`'s signal). */
export class Stopped extends Error {}

/**
 * Reads `source` to its end into a new file under `dir`. On any failure (too large, aborted, `stop` signalled) the
 * file is removed. The source is not destroyed on TooLarge or Stopped, so the caller can still answer on its
 * connection.
 */
export async function spool(
  source: Readable,
  dir: string,
  maxBytes: number,
  stop?: AbortSignal,
): Promise<Spooled> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const path = join(dir, `${randomToken(12)}.part`);
  const file = await open(path, 'wx', PRIVATE_FILE_MODE);
  const hash = createHash('sha256');
  let size = 0;
  let onStop = () => {};
  try {
    await new Promise<void>((resolve, reject) => {
      let writing = Promise.resolve();
      let done = false;
      const fail = (err: Error) => {
        if (done) return;
        done = true;
        source.off('data', onData);
        source.pause();
        reject(err);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail(new TooLarge());
        hash.update(chunk);
        // One write at a time, with backpressure: the socket is paused until the disk has the chunk.
        source.pause();
        writing = writing
          .then(() => file.write(chunk))
          .then(() => {
            if (!done) source.resume();
          }, fail);
      };
      source.on('data', onData);
      source.once('end', () =>
        writing.then(() => {
          if (!done) {
            done = true;
            resolve();
          }
        }),
      );
      source.once('error', fail);
      // A client trickling its bytes would otherwise hold a graceful stop until the process is killed.
      onStop = () => fail(new Stopped());
      if (stop?.aborted) onStop();
      stop?.addEventListener('abort', onStop, { once: true });
      // A client that goes away mid-upload closes the stream without an end.
      source.once('close', () => {
        if (!source.readableEnded) fail(new Error('upload aborted'));
      });
    });
    await file.sync();
  } catch (err) {
    await file.close();
    await rm(path, { force: true });
    throw err;
  } finally {
    stop?.removeEventListener('abort', onStop);
  }
  await file.close();
  return { path, size, sha256: hash.digest('hex') };
}

/** Removes temporary files older than `ageMs`: leftovers of a crash mid-upload. */
export async function cleanSpool(dir: string, now: number, ageMs: number): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(dir, name);
    const info = await stat(path).catch(() => null);
    if (info && now - info.mtimeMs > ageMs) await rm(path, { force: true });
  }
}
