#!/usr/bin/env node
/**
 * The `herald` command (`npx herald …`, `npm start`). Herald is TypeScript run by Node.js 24 with three V8 flags
 * measured by the benchmark (README, "Run it"). This launcher runs under any Node: it starts src/main.ts on Node 24
 * (this Node when it is 24 or later, else the one the project installs, the `node` devDependency) with those flags,
 * which a running Node cannot take any more; it passes signals in and the exit status out.
 *
 * Herald never outlives the launcher (docs/operations.md, "Running under a supervisor"):
 * - Herald runs in a process group of its own, so that it hears each signal once, from here: a terminal's Ctrl-C
 *   reaches every process of the foreground group and `npm start` forwards it again, and Herald reads a second
 *   signal as "stop now".
 * - That group would outlive a SIGKILL of ours, so Herald holds an IPC channel to us, its lifeline
 *   (src/lifeline.ts): when we are gone, however we went, the channel closes and Herald exits at once.
 * - Started by npm (`npm start`, `npx herald`), we go when npm goes: npm dies before its child only when it is
 *   killed, and then nobody waits for our exit status.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
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

const child = spawn(node, [...V8_FLAGS, `${root}src/main.ts`, ...process.argv.slice(2)], {
  stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  detached: true,
});

let stopping = false;
const lastSent = new Map();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // One key press that arrives twice (from the terminal and from npm) is one signal.
    if (Date.now() - (lastSent.get(signal) ?? 0) < 200) return;
    lastSent.set(signal, Date.now());
    stopping = true;
    child.kill(signal);
  });
}

child.on('exit', (code, signal) => {
  if (code !== null) process.exit(code);
  // Ended by a signal: end the same way, so that a caller sees what a direct run would have shown. As PID 1 (a
  // container's entry point) the kernel ignores a signal we send ourselves, so the shell's 128 + n follows.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  process.exit(128 + (constants.signals[signal] ?? 0));
});

/** The process ids from ours up to npm's: our parent, and its parent when it is the shell npm runs scripts in. */
function npmChain() {
  const parentOf = (pid) => {
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return null; // not Linux, or the process is gone
    }
  };
  const chain = [process.pid, process.ppid];
  const grandparent = parentOf(process.ppid);
  const shell = readFileSafe(`/proc/${process.ppid}/cmdline`).startsWith('sh\0-c\0');
  if (shell && grandparent) chain.push(grandparent);
  return { chain, parentOf };
}

function readFileSafe(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

if (process.env.npm_command) {
  const { chain, parentOf } = npmChain();
  const watch = setInterval(() => {
    if (stopping) return;
    // npm or its shell has gone when a process of the chain has another parent than when we started.
    for (let i = 0; i + 1 < chain.length; i++) {
      const parent = i === 0 ? process.ppid : parentOf(chain[i]);
      if (parent === chain[i + 1]) continue;
      clearInterval(watch);
      // A Ctrl-C ends npm too, and this timer may see that before our own SIGINT is handled: a signal that comes
      // meanwhile means a stop is under way, not a crash.
      setTimeout(() => {
        if (stopping) return;
        console.error('herald: npm, which started Herald, is gone; stopping at once');
        child.kill('SIGKILL');
      }, 100);
      return;
    }
  }, 200);
  watch.unref();
}
