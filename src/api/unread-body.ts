/**
 * A request answered before its body was read (a 413 on its Content-Length, a 403 on its key, a stop): the answer
 * says `Connection: close`, and what the client still sends is read and thrown away for a bounded while before the
 * socket closes. Closing at once makes the kernel reset a connection the client is still writing to, and the reset
 * can wipe the answer from the client's buffer before it is read: curl saw "Send failure: Broken pipe", not its 413.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface Linger {
  /** How long a client may go on sending after its answer. */
  ms: number;
  /** How much of it is read (and discarded) at most. */
  bytes: number;
  /** The shorter while once the server is stopping: the answer is out, the stop should not wait long for it. */
  stoppingMs: number;
}

/** How often the discarded bytes are counted: at loopback speed, what passes the limit between two counts is small. */
const METER_MS = 10;

export const LINGER: Linger = { ms: 5000, bytes: 64 * 1024 * 1024, stoppingMs: 1000 };

/** Node's http server ends a `Connection: close` socket through this (undocumented) method once the answer is out. */
type ClosingSocket = Socket & { destroySoon?: () => void };

export function installUnreadBodyClose(app: FastifyInstance, linger: Linger = LINGER): void {
  const lingering = new Map<Socket, NodeJS.Timeout>();
  let stopping = false;

  const closeAfter = (socket: Socket, ms: number) => {
    clearTimeout(lingering.get(socket));
    lingering.set(
      socket,
      setTimeout(() => socket.destroy(), ms),
    );
  };

  const drain = (socket: Socket, request: IncomingMessage) => {
    socket.end();
    if (socket.destroyed) return;
    closeAfter(socket, stopping ? linger.stoppingMs : linger.ms);
    socket.once('close', () => {
      clearTimeout(lingering.get(socket));
      lingering.delete(socket);
    });
    // Once the answer is flushed: destroying earlier would drop it.
    const close = () =>
      socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy());
    // Counted on the socket: Node discards a body nobody reads without emitting it.
    const start = socket.bytesRead;
    const meter = setInterval(() => {
      if (socket.bytesRead - start > linger.bytes) close();
    }, METER_MS);
    socket.once('close', () => clearInterval(meter));
    // The whole body is in: nothing unread is left to turn the close into a reset.
    request.once('end', close);
    // Flowing with no reader: the bytes are discarded (a route may have paused the body when it refused it).
    request.resume();
  };

  app.addHook('onSend', async (request, reply) => {
    const raw = request.raw;
    const socket = raw.socket as ClosingSocket;
    if (!hasBody(raw) || raw.complete || socket.destroyed) return;
    reply.header('connection', 'close');
    socket.destroySoon = () => drain(socket, raw);
  });

  // Answers still lingering (and those written during the stop, such as uploads cut short) close sooner.
  app.addHook('preClose', async () => {
    stopping = true;
    for (const socket of lingering.keys()) closeAfter(socket, linger.stoppingMs);
  });
}

function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
