/**
 * The Python receiver of docs/receiving.md, taken from the document itself (so the two cannot drift), runs under
 * python3 and receives real signed deliveries from a real Herald. The Go snippet is not run: Go is not installed
 * on the machines this project is tested on (the document says so).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { eventually, messagePayload, startTestHerald, type TestHerald } from '../support/herald.ts';
import { signedPost } from '../support/signed-post.ts';

const DOC = resolve(import.meta.dirname, '../../docs/receiving.md');
const SECRET = 'whsec_python_receiver';
let h: TestHerald;
let python: ChildProcess;
let output = '';
let url = '';

/** The one ```python block under "## Python". */
function pythonSnippet(): string {
  const doc = readFileSync(DOC, 'utf8');
  const section = doc.slice(doc.indexOf('\n## Python'));
  const m = /```python\n([\s\S]*?)```/.exec(section);
  assert.ok(m, 'docs/receiving.md has a python block under "## Python"');
  return m[1];
}

before(async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'herald-py-')), 'receiver.py');
  writeFileSync(file, pythonSnippet());
  python = spawn('python3', [file], {
    env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET: SECRET, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  python.stdout?.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  python.stderr?.setEncoding('utf8').on('data', (s: string) => {
    output += s;
  });
  url = await eventually(async () => /listening on (\S+)/.exec(output)?.[1], 10_000, 'the python receiver');
  h = await startTestHerald();
});
after(async () => {
  python?.kill();
  await h?.close();
});

test("the Python receiver of the docs accepts Herald's signed delivery, ignores a replay, refuses tampering and age", async () => {
  const ins = await h.createInstance('python');
  await h.createWebhook(ins, { destination_url: url, events: ['message'], client_sign_secret: SECRET });
  const published = await h.publish(ins, { event: 'message', payload: messagePayload({ body: 'Grüße 👋' }) });
  const eventId: string = published.body.event_id;
  const delivery = await eventually(async () => {
    const r = await h.request('GET', `/instances/${ins}/deliveries`);
    const d = r.body.deliveries[0];
    return d?.status === 'delivered' ? d : undefined;
  });
  assert.equal(delivery.last_status_code, 200);
  await eventually(async () => (output.includes(`200 ${eventId} message verified`) ? true : undefined));

  const detail = await h.request('GET', `/instances/${ins}/deliveries/${delivery.delivery_id}`);
  const body: string = detail.body.delivery.request_body;
  const post = (raw: string, ageSeconds = 0) =>
    signedPost(url, { secret: SECRET, eventId, body: raw, signed: body, ageSeconds });
  assert.equal((await post(body)).status, 200);
  await eventually(async () => (output.includes(`200 ${eventId} duplicate, ignored`) ? true : undefined));
  assert.equal((await post(body.replace('Grüße', 'Grusse'))).status, 401);
  assert.equal((await post(body, 301)).status, 401);
  const said = (line: string) =>
    eventually(async () => (output.includes(line) ? true : undefined), 5000, line);
  await said('401 signature mismatch');
  await said('401 timestamp more than 300 s away');
});
