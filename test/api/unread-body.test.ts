/**
 * An answer given before the body is read (413 on an oversize body) reaches the client: the server says
 * `Connection: close`, reads and discards what the client still sends for a bounded while, and only then closes.
 * The client here writes its whole body in slow pieces before it reads, as naive clients do; a server that closed
 * at once would reset the connection under it (EPIPE) and the 413 would never be read.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { LINGER } from '../../src/api/unread-body.ts';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { rawRequest, statusOf } from '../support/raw-client.ts';

const MiB = 1024 * 1024;

/** The most the two kernels' buffers may hold: the receiver's largest TCP window and the sender's largest buffer. */
function kernelBuffers(): number {
  try {
    const largest = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
    return largest('/proc/sys/net/ipv4/tcp_rmem') + largest('/proc/sys/net/ipv4/tcp_wmem');
  } catch {
    return 64 * MiB;
  }
}
let h: TestHerald;
let ins: string;

before(async () => {
  h = await startTestHerald({ MEDIA_MAX_BYTES: String(MiB) });
  ins = await h.createInstance();
});
after(() => h.close());

const head = (path: string, type: string, framing: string) =>
  `POST ${path} HTTP/1.1\nHost: herald\nAuthorization: Bearer ${ADMIN_KEY}\nContent-Type: ${type}\n${framing}`;

describe('an oversize body sent in full before the answer is read', () => {
  test('media over MEDIA_MAX_BYTES by its Content-Length: the 413 arrives, no write fails', async () => {
    const c = rawRequest(h.url, head(`/instances/${ins}/media`, 'video/mp4', `Content-Length: ${4 * MiB}`));
    const sent = await c.send(4 * MiB, { pauseMs: 2 });
    assert.deepEqual(sent, { sent: 4 * MiB, error: null });
    const { text } = await c.closed;
    assert.equal(statusOf(text), 413, text);
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.match(text, /MEDIA_MAX_BYTES \(1048576 bytes\)/);
  });

  test('media streamed without a length, refused when it passes the limit: the 413 arrives', async () => {
    const c = rawRequest(h.url, head(`/instances/${ins}/media`, 'video/mp4', 'Transfer-Encoding: chunked'));
    // One chunk of 4 MiB: its size line, then the bytes (the refusal comes mid-chunk).
    c.socket.write(`${(4 * MiB).toString(16)}\r\n`);
    const sent = await c.send(4 * MiB, { pauseMs: 2 });
    assert.deepEqual(sent, { sent: 4 * MiB, error: null });
    const { text } = await c.closed;
    assert.equal(statusOf(text), 413, text);
    assert.match(text, /"payload_too_large"/);
  });

  test('an event of 2 MB (over its 256 KiB limit): the 413 arrives', async () => {
    const [open, close] = ['{"event":"message","payload":{"body":"', '"}}'];
    const length = open.length + 2_000_000 + close.length;
    const c = rawRequest(
      h.url,
      head(`/instances/${ins}/events`, 'application/json', `Content-Length: ${length}`),
    );
    c.socket.write(open);
    const sent = await c.send(2_000_000, { pauseMs: 2 });
    c.socket.write(close);
    assert.deepEqual(sent, { sent: 2_000_000, error: null });
    const { text } = await c.closed;
    assert.equal(statusOf(text), 413, text);
    assert.match(text, /request body is larger than the limit/);
  });

  test('a client that never stops sending is cut off after a bounded amount', async () => {
    const c = rawRequest(
      h.url,
      head(`/instances/${ins}/media`, 'video/mp4', `Content-Length: ${1024 * MiB}`),
    );
    const sent = await c.send(1024 * MiB, { piece: MiB });
    assert.notEqual(sent.error, null, 'the server closed the connection');
    // What the server read (its limit, and what arrives between two looks at the count), plus what the two
    // kernels' buffers held when it closed.
    const bound = LINGER.bytes + 16 * MiB + kernelBuffers();
    assert.ok(sent.sent < bound, `sent ${sent.sent} bytes, more than ${bound}`);
    await c.closed;
  });
});
