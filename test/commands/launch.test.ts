/**
 * How a person starts Herald: `npx herald …` (the package's bin) on the project's Node 24 whatever Node is first on
 * PATH, and `node src/cli.ts` on an older Node saying that Node 24 is needed instead of failing on ".ts".
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { startSummary } from '../../src/commands/serve.ts';
import { loadConfig } from '../../src/config.ts';
import { eventually } from '../support/herald.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const OLD_NODE = '/usr/bin/node';
const oldMajor = Number(
  spawnSync(OLD_NODE, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout ?? '0',
);
const noOldNode = oldMajor > 0 && oldMajor < 24 ? false : `no Node older than 24 at ${OLD_NODE}`;
/** PATH with the system's directories only: the Node on it is the old one, as in a fresh shell. */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

test('npx herald --help prints the overview', () => {
  const r = spawnSync('npx', ['herald', '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PATH: SYSTEM_PATH },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Usage: herald <command> \[options\]/);
  assert.match(r.stdout, /^ {2}admin-key /m);
});

test('the bin runs Herald on Node 24 when the Node that starts it is older', { skip: noOldNode }, () => {
  const r = spawnSync(OLD_NODE, [join(ROOT, 'bin/herald.js'), 'receiver', '--port', 'x'], {
    encoding: 'utf8',
    env: { PATH: SYSTEM_PATH },
  });
  // The receiver command parsed its options, so src/main.ts ran (on Node 24: Node 20 cannot load it).
  assert.equal(r.status, 2);
  assert.match(r.stderr, /herald receiver: --port: must be an integer from 0 to 65535, got "x"/);
});

test('node src/cli.ts on an older Node says Node 24 is needed and how to get it', { skip: noOldNode }, () => {
  const r = spawnSync(OLD_NODE, ['src/cli.ts', '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: SYSTEM_PATH },
  });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.match(
    r.stderr,
    new RegExp(`^herald: Node\\.js 24 or later is needed; this is Node\\.js v${oldMajor}\\.`),
  );
  assert.match(r.stderr, /run "npm install", then "npx herald …" or "npm start"/);
  assert.doesNotMatch(r.stderr, /ERR_UNKNOWN_FILE_EXTENSION/);
});

test('node src/cli.ts on Node 24 runs the command', () => {
  const r = spawnSync(process.execPath, ['src/cli.ts', '--help'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Usage: herald/);
});

test('the start summary names the database without its password', () => {
  const config = loadConfig({
    DATABASE_URL: 'postgres://herald:s3cret-pw@db.internal:5432/herald',
    DATA_DIR: '/srv/herald',
  });
  const text = startSummary(config, 'http://127.0.0.1:8080', 'all', null);
  assert.match(text, /^ {2}store {6}PostgreSQL, postgres:\/\/herald@db\.internal:5432\/herald$/m);
  assert.doesNotMatch(text, /s3cret-pw|Admin API key/);
});

test('SIGTERM to the bin stops Herald gracefully, once, with exit code 0', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bin-'));
  const child = spawn(noOldNode ? process.execPath : OLD_NODE, [join(ROOT, 'bin/herald.js'), 'serve'], {
    env: { PATH: SYSTEM_PATH, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  try {
    await eventually(
      async () => (/Herald is listening on/.test(output) ? true : undefined),
      20_000,
      'the start',
    );
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
    assert.equal(output.match(/SIGTERM received/g)?.length, 1, output);
    assert.doesNotMatch(output, /received again/);
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('herald serve prints its banner first; the JSON log says where it listens after it, not before', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-banner-'));
  // HOST 0.0.0.0 without PUBLIC_URL: the warning about media links comes after the banner too.
  const child = spawn(process.execPath, [join(ROOT, 'bin/herald.js'), 'serve'], {
    env: { PATH: SYSTEM_PATH, DATA_DIR: dataDir, PORT: '0', HOST: '0.0.0.0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  try {
    await eventually(
      async () => (/PUBLIC_URL is unset/.test(output) ? true : undefined),
      20_000,
      'the start',
    );
    const lines = output.split('\n');
    assert.match(lines[0], /^Herald is listening on http:\/\/0\.0\.0\.0:\d+$/, output);
    const url = lines[0].slice('Herald is listening on '.length);
    const logged = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.equal(logged[0].msg, `Herald is listening on ${url}`);
    assert.equal(logged[0].url, url);
    assert.equal(logged[0].level, 30);
    assert.match(logged[1].msg, /^PUBLIC_URL is unset/);
    // Fastify's own "Server listening at …", one per interface, is not logged.
    assert.doesNotMatch(output, /Server listening at/);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
