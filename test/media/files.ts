/** Real files for the media tests: a valid PNG image built here, and helpers to upload and hash. */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32, deflateSync } from 'node:zlib';
import { request } from 'undici';
import { ADMIN_KEY } from '../support/herald.ts';

/** A valid `size`×`size` RGB PNG (a colour gradient), so that an image viewer would show it. */
export function pngImage(size = 32): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, no interlace
  const rows = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    const row = y * (1 + size * 3);
    for (let x = 0; x < size; x++) rows.set([x * 8, y * 8, 128], row + 1 + x * 3);
  }
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** Uploads raw bytes; returns the status and the parsed answer. */
export async function upload(
  baseUrl: string,
  instanceId: string,
  data: Uint8Array,
  contentType: string | null,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` };
  if (contentType !== null) headers['content-type'] = contentType;
  const res = await fetch(`${baseUrl}/instances/${instanceId}/media`, {
    method: 'POST',
    headers,
    body: data as Uint8Array<ArrayBuffer>,
  });
  return { status: res.status, body: await res.json() };
}

/** Streams `mebibytes` MiB of `fill` bytes as one upload, without a Content-Length; answers the status code. */
export async function uploadStream(
  baseUrl: string,
  instanceId: string,
  mebibytes: number,
  fill: number,
): Promise<number> {
  let sent = 0;
  const chunk = Buffer.alloc(1024 * 1024, fill);
  const res = await request(`${baseUrl}/instances/${instanceId}/media`, {
    method: 'POST',
    body: new Readable({
      read() {
        this.push(sent++ < mebibytes ? chunk : null);
      },
    }),
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'video/mp4' },
  });
  await res.body.dump();
  return res.statusCode;
}
