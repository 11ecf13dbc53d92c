/**
 * The engine's file server for EM, in a process of its own so that its CPU is measured apart from Herald's and the
 * bench's: the same stand-in for WAHA's /api/files/… that `herald simulate --engine waha` serves
 * (src/simulation/media-server.ts): 24 KiB per file, the same bytes for the same name, `image/jpeg` for a .jpeg,
 * and 401 without the X-Api-Key, so that a Herald without ENGINE_MEDIA_HEADERS gets no file.
 */
import { MediaServer, type MediaServerStats } from '../src/simulation/media-server.ts';
import { Child, serveParent } from './ipc.ts';

export class FileServer {
  readonly #child: Child;
  /** URL prefix of its files: a file's URL is this followed by its name. */
  readonly files: string;

  private constructor(child: Child, files: string) {
    this.#child = child;
    this.files = files;
  }

  static async start(apiKey: string): Promise<FileServer> {
    const child = new Child(import.meta.filename, [apiKey]);
    const { files } = (await child.ready) as { files: string };
    return new FileServer(child, files);
  }

  get pid(): number {
    return this.#child.pid;
  }

  /** Files served and requests refused (no or wrong key) since it started. */
  stats(): Promise<MediaServerStats> {
    return this.#child.call('stats');
  }

  stop(): Promise<void> {
    return this.#child.stop(1000);
  }
}

async function main(apiKey: string): Promise<void> {
  const server = await MediaServer.start(apiKey);
  serveParent({ files: server.fileUrl('', false) }, { stats: () => server.stats });
}

if (import.meta.main) await main(process.argv[2]);
