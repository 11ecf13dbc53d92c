/**
 * The session page's files, read from src/ and served under the same path (/src/ui/assets/main.ts), so a reader
 * finds in the browser exactly the file of the repository. TypeScript is type-stripped by Node's own
 * stripTypeScriptTypes (no bundler, no build step) once per file; `tsc --noEmit` checks the browser code with
 * the rest. Only the page's own folder, the pure event catalog it shares with the server, and the charting
 * library's two files (from its npm package, under /src/vendor/) are served.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire, stripTypeScriptTypes } from 'node:module';
import { dirname, extname, join } from 'node:path';

const SRC = join(import.meta.dirname, '..');
const ASSETS = 'ui/assets';
/** Browser code imports the server's event catalog, so the page can never offer a kind the API refuses. */
const SHARED = ['domain/event-kinds.ts'];
/** uPlot draws the webhooks' charts (webhook-charts.ts): its module and styles, as the package ships them. */
const UPLOT = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
const VENDOR: Record<string, string> = {
  'vendor/uplot/uPlot.esm.js': join(UPLOT, 'uPlot.esm.js'),
  'vendor/uplot/uPlot.min.css': join(UPLOT, 'uPlot.min.css'),
};

const TYPES: Record<string, string> = {
  '.ts': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

export class AssetFiles {
  readonly #allowed: Set<string>;
  readonly #cache = new Map<string, Asset>();
  readonly #fill: Record<string, string>;

  /**
   * `fill` gives the text of each %NAME% in HTML: %HERALD_VERSION% (the page shows the User-Agent deliveries carry),
   * the portal's title and accent. Escaped here.
   */
  constructor(fill: Record<string, string>) {
    this.#fill = Object.fromEntries(Object.entries(fill).map(([k, v]) => [k, escapeHtml(v)]));
    const own = readdirSync(join(SRC, ASSETS))
      .filter((f) => TYPES[extname(f)])
      .map((f) => `${ASSETS}/${f}`);
    this.#allowed = new Set([...own, ...SHARED, ...Object.keys(VENDOR)]);
  }

  /** The file at `path` (relative to src/), ready to send; null for anything not on the list. */
  get(path: string): Asset | null {
    if (!this.#allowed.has(path)) return null;
    let asset = this.#cache.get(path);
    if (!asset) {
      const text = readFileSync(VENDOR[path] ?? join(SRC, path), 'utf8');
      const ext = extname(path);
      const body =
        ext === '.ts'
          ? strip(text)
          : ext === '.html'
            ? text.replaceAll(/%([A-Z_]+)%/g, (all, name: string) => this.#fill[name] ?? all)
            : text;
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      asset = { body, type: TYPES[extname(path)], etag };
      this.#cache.set(path, asset);
    }
    return asset;
  }
}

/**
 * stripTypeScriptTypes is marked experimental in Node 24 and warns once per process; what it does here (erase the
 * types of erasable syntax, which tsconfig enforces) is what Node does to run every .ts file of Herald, so the
 * warning would only alarm an operator. It is silenced for this call alone.
 */
function strip(code: string): string {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(warning).includes('stripTypeScriptTypes')) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return stripTypeScriptTypes(code, { mode: 'strip' });
  } finally {
    process.emitWarning = emit;
  }
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
