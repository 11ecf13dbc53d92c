/**
 * A raw HTTP/1.1 client on node:net, for what fetch and undici do not let a test do: send a body in slow pieces,
 * stop half-way, or write all of it before reading a byte of the answer (as naive clients do).
 */
import { connect, type Socket } from 'node:net';

export interface RawExchange {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves when the server's answer has fully arrived (the server closed, or the client's timeout). */
  closed: Promise<{ text: string; error: string | null }>;
  /** Sends `total` bytes of `fill` in `piece`-sized writes, `pauseMs` apart, each after the previous one drained. */
  send(total: number, options?: { piece?: number; pauseMs?: number; fill?: number }): Promise<SendResult>;
}

export interface SendResult {
  sent: number;
  /** The error code a write met (EPIPE, ECONNRESET), or null when every byte went out. */
  error: string | null;
}

/** Opens a connection and writes the request head; the body is the caller's to send. */
export function rawRequest(baseUrl: string, head: string): RawExchange {
  const url = new URL(baseUrl);
  // Half-open: the client goes on writing after the server's FIN, as a client that has not read yet would.
  const socket = connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
  let text = '';
  let error: string | null = null;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    text += d;
  });
  socket.on('error', (e: NodeJS.ErrnoException) => {
    error ??= e.code ?? e.message;
  });
  let sending = false;
  // The server is done: the client closes too, once it has finished its own sending.
  socket.on('end', () => {
    if (!sending) socket.end();
  });
  const closed = new Promise<{ text: string; error: string | null }>((resolve) =>
    socket.on('close', () => resolve({ text, error })),
  );
  socket.write(`${head.trim().replace(/\n/g, '\r\n')}\r\n\r\n`);
  return {
    socket,
    received: () => text,
    closed,
    async send(total, { piece = 64 * 1024, pauseMs = 0, fill = 0x61 } = {}) {
      const chunk = Buffer.alloc(piece, fill);
      let sent = 0;
      sending = true;
      const done = (result: SendResult) => {
        sending = false;
        if (socket.readableEnded) socket.end();
        return result;
      };
      while (sent < total) {
        if (socket.destroyed || !socket.writable) return done({ sent, error: error ?? 'closed' });
        const n = Math.min(piece, total - sent);
        const flushed = await new Promise<string | null>((resolve) =>
          socket.write(n === piece ? chunk : chunk.subarray(0, n), (err) =>
            resolve(err ? ((err as NodeJS.ErrnoException).code ?? err.message) : null),
          ),
        );
        if (flushed) return done({ sent, error: flushed });
        sent += n;
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
      return done({ sent, error: null });
    },
  };
}

/** The status code of a raw answer, or null when none arrived. */
export function statusOf(text: string): number | null {
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  return m ? Number(m[1]) : null;
}
