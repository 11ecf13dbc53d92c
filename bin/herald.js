#!/usr/bin/env node
/**
 * The `herald` command (`npx herald …`). Herald is TypeScript run by Node.js 24 with three V8 flags measured by the
 * benchmark (README, "Run it"). This launcher runs under any Node: it starts src/main.ts on Node 24 — this Node when
 * it is 24 or later, else the one the project installs (the `node` devDependency) — and passes signals and the exit
 * code through, so that `herald serve` stops gracefully on Ctrl-C or SIGTERM.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { V8_FLAGS } from './v8-flags.js';

const NEEDED = 24;
const root = fileURLToPath(new URL('..', import.meta.url));
const bundled = `${root}node_modules/node/bin/node`;

const major = Number(process.versions.node.split('.')[0]);
const node = major >= NEEDED ? process.execPath : existsSync(bundled) ? bundled : null;
if (!node) {
  console.error(
    `herald: Node.js ${NEEDED} or later is needed; this is Node.js ${process.version}, and the project's own ` +
      `(${bundled}) is not installed: run "npm install" in ${root}`,
  );
  process.exit(1);
}

// In a process group of its own, so that it hears each signal once, from here: a terminal's Ctrl-C reaches every
// process of the foreground group, and `npm start` forwards it again, and Herald reads a second signal as "stop now".
const child = spawn(node, [...V8_FLAGS, `${root}src/main.ts`, ...process.argv.slice(2)], {
  stdio: 'inherit',
  detached: true,
});
const lastSent = new Map();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // One key press that arrives twice (from the terminal and from npm) is one signal.
    if (Date.now() - (lastSent.get(signal) ?? 0) < 200) return;
    lastSent.set(signal, Date.now());
    child.kill(signal);
  });
}
child.on('exit', (code, signal) => {
  if (code !== null) process.exit(code);
  // Ended by a signal: end the same way, so a caller sees what a direct run would have shown.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
