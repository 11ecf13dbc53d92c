/**
 * TLS for the broker tests: a throwaway certificate authority made with openssl for the run and trusted by this
 * process only, certificates it issues for a name, and a TLS terminator on 127.0.0.1 in front of a plain broker
 * (amqps, rediss) that records the server name (SNI) each client asked for.
 */
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, getCACertificates, type Server, setDefaultCACertificates } from 'node:tls';

export interface Issued {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

export class TestAuthority {
  readonly #dir: string;

  private constructor(dir: string) {
    this.#dir = dir;
  }

  /** A new authority, added to the certificates this process trusts. */
  static create(): TestAuthority {
    const dir = mkdtempSync(join(tmpdir(), 'herald-tls-'));
    const ca = new TestAuthority(dir);
    const subject = ['-subj', '/CN=Herald test CA', '-days', '2'];
    ca.#openssl('req', '-x509', ...ca.#newKey('ca.key'), '-out', ca.#file('ca.pem'), ...subject);
    setDefaultCACertificates([...getCACertificates('default'), readFileSync(ca.#file('ca.pem'), 'utf8')]);
    return ca;
  }

  /** A certificate for `name` (its only subject alternative name), signed by this authority. */
  issue(name: string): Issued {
    const [keyFile, certFile, csr, ext] = ['key', 'pem', 'csr', 'ext'].map((x) => this.#file(`${name}.${x}`));
    this.#openssl('req', ...this.#newKey(`${name}.key`), '-out', csr, '-subj', `/CN=${name}`);
    writeFileSync(ext, `subjectAltName=DNS:${name}\n`);
    this.#openssl(
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.#file('ca.pem'),
      '-CAkey',
      this.#file('ca.key'),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      ext,
      '-out',
      certFile,
    );
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
  }

  remove(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #file(name: string): string {
    return join(this.#dir, name);
  }

  #newKey(file: string): string[] {
    return [
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      this.#file(file),
    ];
  }

  #openssl(...args: string[]): void {
    execFileSync('openssl', args, { stdio: 'ignore' });
  }
}

/** TLS on 127.0.0.1 in front of a plain server on 127.0.0.1:`port`, presenting `issued`. */
export class TlsTerminator {
  readonly port: number;
  /** The server name each client that completed the handshake sent (false or null when it sent none). */
  readonly serverNames: (string | false | null)[];
  readonly #server: Server;
  readonly #sockets: Set<Socket>;

  private constructor(server: Server, serverNames: (string | false | null)[], sockets: Set<Socket>) {
    this.#server = server;
    this.port = (server.address() as { port: number }).port;
    this.serverNames = serverNames;
    this.#sockets = sockets;
  }

  static async start(issued: Issued, port: number): Promise<TlsTerminator> {
    const serverNames: (string | false | null)[] = [];
    const sockets = new Set<Socket>();
    const server = createServer({ cert: issued.cert, key: issued.key }, (client) => {
      serverNames.push(client.servername);
      const upstream = createConnection(port, '127.0.0.1');
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => {
          sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    server.on('tlsClientError', () => {}); // a client that refuses the certificate: the test reads its words
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return new TlsTerminator(server, serverNames, sockets);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
