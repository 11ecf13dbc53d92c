/**
 * Run inside the image's build stage (Containerfile), never on a working tree: removes from the node_modules copied
 * in every package that package-lock.json marks as needed by devDependencies alone, and the workspace links, so the
 * image holds production dependencies only, as `npm ci --omit=dev` would install them, without needing npm (a
 * plain Debian base has none) or the network. The host's install is kept as it is, patches (patch-package) included.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

interface LockEntry {
  dev?: boolean;
  link?: boolean;
}

const root = process.argv[2] ?? '.';
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

let removed = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  // "" is the project itself; "packages/…" entries are the workspaces' own folders (not copied in).
  if (!path.includes('node_modules/')) continue;
  if (!entry.dev && !entry.link) continue;
  const target = join(root, path);
  if (!existsSync(target)) continue;
  rmSync(target, { recursive: true, force: true });
  removed++;
}
// Command shims of dev tools (tsc, biome, …); Herald runs none of them.
rmSync(join(root, 'node_modules/.bin'), { recursive: true, force: true });
console.log(`prune-dev-deps: removed ${removed} development-only packages`);
