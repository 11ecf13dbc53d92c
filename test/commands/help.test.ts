/** `herald --help`, `herald help [command]` and `herald <command> --help` print exactly what docs/cli.md shows. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../support/cli.ts';

const DOC = readFileSync(resolve(import.meta.dirname, '../../docs/cli.md'), 'utf8');

/** docs/cli.md's help blocks: "### `herald serve --help`" followed by a text block. */
const documented = new Map(
  [...DOC.matchAll(/^### `herald ((?:\S+ )?)--help`\n\n```text\n([\s\S]*?)\n```/gm)].map((m) => [
    m[1].trim(),
    m[2],
  ]),
);

async function printed(args: string[]): Promise<{ code: number | null; text: string }> {
  const p = runCli(args);
  const { code } = await p.exited;
  return { code, text: p.output().replace(/\n$/, '') };
}

test('herald --help, -h, help and no command print the overview shown in the README', async () => {
  const overview = documented.get('');
  assert.ok(overview, 'README has a "herald --help" block');
  for (const args of [['--help'], ['-h'], ['help'], []]) {
    assert.deepEqual(await printed(args), { code: 0, text: overview }, args.join(' '));
  }
});

test('every command of the overview has its help in the README, printed alike by --help and help <command>', async () => {
  const overview = documented.get('') ?? '';
  const commands = [...overview.matchAll(/^ {2}(\S+) {2,}/gm)].map((m) => m[1]).filter((c) => c !== 'help');
  assert.ok(commands.includes('serve') && commands.includes('receiver') && commands.includes('simulate'));
  assert.deepEqual(
    [...documented.keys()].filter(Boolean).sort(),
    [...commands].sort(),
    'one README block per command',
  );
  const results = await Promise.all(
    commands.flatMap((c) =>
      [printed([c, '--help']), printed(['help', c])].map(async (r) => [c, await r] as const),
    ),
  );
  for (const [c, r] of results) assert.deepEqual(r, { code: 0, text: documented.get(c) }, c);
});

test('serve documents --role api|worker', () => {
  assert.match(documented.get('serve') ?? '', /--role api\|worker/);
});

test('an unknown command or option exits 2 and shows what is valid', async () => {
  const unknown = await printed(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.text, /unknown command "frobnicate"[\s\S]*Commands:/);
  const option = await printed(['receiver', '--fail-rat', '0.2']);
  assert.equal(option.code, 2);
  assert.match(option.text, /herald receiver: Unknown option '--fail-rat'[\s\S]*Usage: herald receiver/);
  const value = await printed(['receiver', '--fail-rate', '2']);
  assert.equal(value.code, 2);
  assert.match(value.text, /--fail-rate: must be a number from 0 to 1, got "2"/);
  const missing = await printed(['simulate', '--key', 'k']);
  assert.equal(missing.code, 2);
  assert.match(missing.text, /--instance: an instance id \(ins_…\) is required/);
});
