/**
 * The receiver kit is its own package (packages/receiver, @herald/receiver): it imports only itself and Node's
 * built-ins (frameworks as types), and a receiver installs it from the tarball `npm pack` makes, on plain Node,
 * with its types.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const KIT = join(ROOT, 'packages/receiver');

test('the kit imports only itself, Node built-ins and (as types) the frameworks it adapts', () => {
  const files = readdirSync(join(KIT, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.ts'),
  );
  assert.ok(files.length >= 8);
  for (const file of files) {
    const path = join(KIT, 'src', file);
    const source = readFileSync(path, 'utf8');
    for (const m of source.matchAll(/^(import|export)(\s+type)?[^'"]*from\s+'([^']+)'/gm)) {
      const [, , typeOnly, spec] = m;
      const where = `${relative(ROOT, path)} imports ${spec}`;
      if (spec.startsWith('.')) {
        assert.ok(relative(KIT, resolve(dirname(path), spec)).startsWith('src/'), where);
      } else if (!spec.startsWith('node:')) {
        assert.ok(typeOnly && spec === 'fastify', `${where}: only node: built-ins at run time`);
      }
    }
  }
});

test('npm pack makes a tarball that installs elsewhere and verifies a signature, with types', () => {
  const work = mkdtempSync(join(tmpdir(), 'herald-receiver-pack-'));
  try {
    const out = execFileSync(
      'npm',
      ['pack', '--workspace', 'packages/receiver', '--pack-destination', work, '--json'],
      {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const [{ filename, files }] = JSON.parse(out.slice(out.indexOf('[')));
    const packed = (files as { path: string }[]).map((f) => f.path);
    assert.ok(packed.includes('dist/index.js') && packed.includes('dist/index.d.ts'), packed.join(', '));
    assert.ok(packed.includes('README.md') && packed.includes('package.json'));
    assert.ok(!packed.some((p) => p.startsWith('src/')), 'built JavaScript, no TypeScript sources to strip');

    const app = join(work, 'app');
    execFileSync('mkdir', [app]);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'a-receiver', private: true, type: 'module' }),
    );
    execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, filename)], {
      cwd: app,
      stdio: 'ignore',
    });
    writeFileSync(
      join(app, 'check.js'),
      `import { sign, verify, MemoryDedupe, heraldNodeHandler } from '@herald/receiver';
const body = '{"event_id":"evt_1","event":"message"}';
const ts = Math.floor(Date.now() / 1000);
const headers = { 'x-service-event-id': 'evt_1', 'x-service-timestamp': String(ts), 'x-service-signature': sign('whsec_x', ts, body) };
const good = verify({ rawBody: body, headers, secret: 'whsec_x' });
const bad = verify({ rawBody: body + ' ', headers, secret: 'whsec_x' });
console.log(JSON.stringify({ good: good.ok, bad: bad.ok ? 'ok' : bad.reason, dedupe: typeof MemoryDedupe, handler: typeof heraldNodeHandler }));
`,
    );
    // Any Node a receiver runs: the kit is plain JavaScript once packed.
    const nodes = [process.execPath, '/usr/bin/node'].filter(
      (n, i) => i === 0 || spawnSync(n, ['-v']).status === 0,
    );
    for (const node of nodes) {
      const run = spawnSync(node, ['check.js'], { cwd: app, encoding: 'utf8' });
      assert.equal(run.status, 0, `${node}: ${run.stderr}`);
      assert.deepEqual(JSON.parse(run.stdout), {
        good: true,
        bad: 'signature_mismatch',
        dedupe: 'function',
        handler: 'function',
      });
    }
    // Its types reach a TypeScript receiver through the package's exports.
    writeFileSync(
      join(app, 'typed.ts'),
      `import { verify, type VerifyResult } from '@herald/receiver';
const r: VerifyResult = verify({ rawBody: '', headers: {}, secret: 's' });
const reason: string = r.ok ? 'ok' : r.reason;
// @ts-expect-error: verify needs the secret
verify({ rawBody: '', headers: {} });
export { reason };
`,
    );
    const tsc = spawnSync(
      join(ROOT, 'node_modules/.bin/tsc'),
      [
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--skipLibCheck',
        '--types',
        'node',
        '--typeRoots',
        join(ROOT, 'node_modules/@types'),
        'typed.ts',
      ],
      { cwd: app, encoding: 'utf8' },
    );
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
