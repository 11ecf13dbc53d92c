/** The receiver kit must be usable by a receiver's own code: no import reaches Herald's server, store or API. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const KIT = join(ROOT, 'src/receiver');
/** Pure domain code a receiver may carry along. */
const ALLOWED_OUTSIDE = ['src/domain/signature.ts', 'src/domain/random.ts'];

test('src/receiver imports only itself, pure signing code, Node built-ins and (as types) the frameworks it adapts', () => {
  const files = readdirSync(KIT, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length >= 6);
  for (const file of files) {
    const path = join(KIT, file);
    const source = readFileSync(path, 'utf8');
    for (const m of source.matchAll(/^(import|export)(\s+type)?[^'"]*from\s+'([^']+)'/gm)) {
      const [, , typeOnly, spec] = m;
      const where = `${relative(ROOT, path)} imports ${spec}`;
      if (spec.startsWith('.')) {
        const target = relative(ROOT, resolve(dirname(path), spec));
        assert.ok(target.startsWith('src/receiver/') || ALLOWED_OUTSIDE.includes(target), where);
      } else if (!spec.startsWith('node:')) {
        assert.ok(typeOnly && spec === 'fastify', `${where}: only node: built-ins at run time`);
      }
    }
  }
});
