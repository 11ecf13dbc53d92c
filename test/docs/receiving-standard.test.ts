/**
 * The Standard Webhooks examples of docs/receiving.md, taken from the document itself (so the two cannot drift), run
 * on Node 24 with the versions of `standardwebhooks` and `svix` the project installs, against a real delivery of a
 * real Herald: each verifies it and gets the event, and throws for a tampered body.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { type Received, TestReceiver } from '../support/receiver.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = readFileSync(join(ROOT, 'docs/receiving.md'), 'utf8');
// A secret of the Standard Webhooks form: whsec_ and the base64 of 24 bytes.
const SECRET = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

/** The ```ts blocks under "## Standard Webhooks" that import `library`. */
function example(library: string): string {
  const section = DOC.slice(DOC.indexOf('\n## Standard Webhooks'), DOC.indexOf('\n## Trying a receiver'));
  const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  const found = blocks.filter((b) => b.includes(`from '${library}'`));
  assert.equal(found.length, 1, `one example importing ${library} under "## Standard Webhooks"`);
  return found[0];
}

let h: TestHerald;
let receiver: TestReceiver;
let delivery: Received;
// Inside the project (test-output/ is not committed), so that the example's import finds its node_modules.
mkdirSync(join(ROOT, 'test-output'), { recursive: true });
const dir = mkdtempSync(join(ROOT, 'test-output', 'receiving-standard-'));

before(async () => {
  h = await startTestHerald();
  receiver = await TestReceiver.start();
  const ins = await h.createInstance('standard');
  await h.createWebhook(ins, {
    destination_url: receiver.url,
    events: ['message'],
    client_sign_secret: SECRET,
    standard_webhooks: true,
  });
  await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'Grüße 👋' }) });
  [delivery] = await receiver.waitFor(1);
});
after(async () => {
  await receiver?.close();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the example with `rawBody` and `headers` of the delivery; prints the event it got as JSON. */
function run(library: string, rawBody: Buffer): { status: number | null; out: string; err: string } {
  const headers = Object.fromEntries(
    Object.entries(delivery.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
  );
  const file = join(dir, `${library}.ts`);
  writeFileSync(
    file,
    `const rawBody = Buffer.from(${JSON.stringify(rawBody.toString('base64'))}, 'base64');\n` +
      `const headers = ${JSON.stringify(headers)};\n` +
      `${example(library)}\nconsole.log(JSON.stringify(event));\n`,
  );
  const r = spawnSync(process.execPath, [file], {
    env: { PATH: process.env.PATH ?? '', HERALD_SECRET: SECRET },
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

for (const library of ['standardwebhooks', 'svix']) {
  test(`the ${library} example verifies a real delivery and gets its event`, () => {
    const r = run(library, delivery.rawBody);
    assert.equal(r.status, 0, r.err);
    const event = JSON.parse(r.out);
    assert.equal(event.event_id, delivery.headers['webhook-id']);
    assert.equal(event.event, 'message');
    assert.equal(event.payload.body, 'Grüße 👋');
  });

  test(`the ${library} example throws for a tampered body`, () => {
    const tampered = Buffer.from(delivery.rawBody.toString('utf8').replace('Grüße', 'Grüsse'));
    const r = run(library, tampered);
    assert.notEqual(r.status, 0);
    assert.match(r.err, /WebhookVerificationError|No matching signature/);
  });
}
