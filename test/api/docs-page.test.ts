/**
 * The /docs page in a real Chromium (driven over the DevTools protocol with Node's own WebSocket): with a key it
 * renders every operation of /openapi.json, with a wrong key it says so, and it requests nothing from elsewhere.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_KEY, eventually, startTestHerald, type TestHerald } from '../support/herald.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}`;
let h: TestHerald;
let browser: ChildProcess;
let profile = '';
let ws: WebSocket;
let nextId = 0;
const pending = new Map<number, (msg: any) => void>();
const requested: string[] = [];

function send(method: string, params: object = {}, sessionId?: string): Promise<any> {
  const id = ++nextId;
  ws.send(JSON.stringify({ id, method, params, sessionId }));
  return new Promise((resolve, reject) =>
    pending.set(id, (msg) =>
      msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result),
    ),
  );
}

async function openPage(url: string): Promise<(expression: string) => Promise<any>> {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Network.enable', {}, sessionId);
  await send('Page.navigate', { url }, sessionId);
  const evaluate = async (expression: string) =>
    (await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId))
      .result.value;
  await eventually(async () => ((await evaluate('document.readyState')) === 'complete' ? true : undefined));
  return evaluate;
}

before(async () => {
  if (skip) return;
  h = await startTestHerald();
  profile = mkdtempSync(join(tmpdir(), 'herald-chromium-'));
  browser = spawn(
    CHROMIUM,
    [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  browser.stderr?.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
  });
  const endpoint = await eventually(
    async () => /DevTools listening on (ws:\S+)/.exec(stderr)?.[1],
    20_000,
    'Chromium',
  );
  ws = new WebSocket(endpoint);
  await new Promise((resolve) => ws.addEventListener('open', resolve, { once: true }));
  ws.addEventListener('message', (e) => {
    const msg = JSON.parse(String(e.data));
    if (msg.id) pending.get(msg.id)?.(msg);
    if (msg.method === 'Network.requestWillBeSent') requested.push(msg.params.request.url);
  });
});

after(async () => {
  ws?.close();
  browser?.kill();
  await h?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('with a key, the page renders every operation; with a wrong one it says the key is unknown', {
  skip,
}, async () => {
  const evaluate = await openPage(`${h.url}/docs`);
  const submit = (key: string) =>
    evaluate(`document.getElementById('key').value = ${JSON.stringify(key)};
              document.getElementById('auth').requestSubmit(); true`);

  await submit('not-a-key');
  const refused = await eventually(async () => {
    const text: string = await evaluate(`document.getElementById('status').textContent`);
    return text.includes('401') ? text : undefined;
  });
  assert.match(refused, /not known/);

  await submit(ADMIN_KEY);
  const spec = (await h.request('GET', '/openapi.json')).body;
  const operations = Object.values(spec.paths as Record<string, object>).reduce(
    (n, ops) => n + Object.keys(ops).length,
    0,
  );
  const shown = await eventually(async () => {
    const summaries: string[] = await evaluate(
      `[...document.querySelectorAll('#api details > summary')].map((s) => s.textContent)`,
    );
    return summaries.length > operations ? summaries : undefined;
  });
  assert.ok(
    shown.some(
      (s) => s.startsWith('POST') && s.includes('/instances/{instance_id}/webhooks/{webhook_id}/test'),
    ),
  );
  assert.ok(shown.some((s) => s.startsWith('GET') && s.includes('/metrics')));
  assert.ok(shown.includes('Webhook'), 'the shared schemas are listed too');
  const origin = new URL(h.url).origin;
  assert.deepEqual(
    requested.filter((u) => !u.startsWith(origin) && u !== 'about:blank'),
    [],
    'nothing requested from another origin',
  );
});
