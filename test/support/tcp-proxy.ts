/**
 * A TCP proxy on 127.0.0.1 in front of a real server (the shared PostgreSQL), for tests of what Herald does when its
 * database goes away: `cut()` drops every connection at once, `refuse()` makes new connections fail with
 * ECONNREFUSED until `accept()`. The server behind it is never touched.
 */
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly port: number;
  readonly #target: { host: string; port: number };
  #server: Server;
  readonly #pairs = new Set<[Socket, Socket]>();
  #accepted = 0;

  private constructor(server: Server, port: number, target: { host: string; port: number }) {
    this.#server = server;
    this.port = port;
    this.#target = target;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const server = await TcpProxy.#listen(0, (s) => proxy.#relay(s));
    const proxy = new TcpProxy(server, (server.address() as { port: number }).port, target);
    return proxy;
  }

  static async #listen(port: number, onConnection: (s: Socket) => void): Promise<Server> {
    const server = createServer(onConnection);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return server;
  }

  #relay(client: Socket): void {
    this.#accepted++;
    const upstream = createConnection(this.#target);
    const pair: [Socket, Socket] = [client, upstream];
    this.#pairs.add(pair);
    const drop = () => {
      this.#pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of pair) {
      s.on('error', drop);
      s.on('close', drop);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Connections accepted since the proxy started, closed ones included. */
  get accepted(): number {
    return this.#accepted;
  }

  /** Open connections through the proxy. */
  get connections(): number {
    return this.#pairs.size;
  }

  /** Drops every connection now (both sides see a reset); returns how many there were. */
  cut(): number {
    const n = this.#pairs.size;
    for (const [client, upstream] of [...this.#pairs]) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.#pairs.clear();
    return n;
  }

  /** Stops listening (new connections are refused) and drops the open ones. */
  async refuse(): Promise<void> {
    const closed = new Promise((resolve) => this.#server.close(resolve));
    this.cut();
    await closed;
  }

  /** Listens again, on the same port. */
  async accept(): Promise<void> {
    this.#server = await TcpProxy.#listen(this.port, (s) => this.#relay(s));
  }

  async close(): Promise<void> {
    this.cut();
    if (this.#server.listening) await new Promise((resolve) => this.#server.close(resolve));
  }
}
