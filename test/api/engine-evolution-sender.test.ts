/**
 * Evolution's own sending pattern against Herald (test/support/evolution-sender.ts mirrors its webhook controller),
 * configured exactly as docs/evolution.md tells users to, taken from the document itself: every event at once, each on
 * its own connection, some reported twice, some answers lost on the way back and retried. Nothing is lost, nothing is
 * stored or delivered twice, and the instance ends on the newest session.status. The answers Evolution does not retry
 * are final.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EVOLUTION_EVENTS, evolutionBody, withS3 } from '../fixtures/evolution-events.ts';
import { EngineFiles } from '../support/engine.ts';
import { EvolutionSender, settingName } from '../support/evolution-sender.ts';
import { ADMIN_KEY, eventually, startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;
const DOC = readFileSync(join(import.meta.dirname, '../../docs/evolution.md'), 'utf8');

let h: TestHerald;
let s3: EngineFiles;
let receiver: TestReceiver;
before(async () => {
  s3 = await EngineFiles.start();
  h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: s3.prefix });
  receiver = await TestReceiver.start();
});
after(async () => {
  await Promise.all([s3.close(), receiver.close()]);
  await h.close();
});

/** The webhook settings of docs/evolution.md's step 2, with its placeholders filled for this Herald. */
function documentedWebhook(ins: string, key: string): Obj & { url: string; events: string[] } {
  const block = /\*\*2\. Evolution's webhook[\s\S]*?```json\n([\s\S]*?)```/.exec(DOC)?.[1];
  assert.ok(block, 'docs/evolution.md shows the webhook settings as JSON');
  const filled = block
    .replaceAll('http://herald.internal:8080', h.url)
    .replaceAll('ins_…', ins)
    .replaceAll('hk_…', key);
  return JSON.parse(filled).webhook;
}

test('configured as the docs say, every event at once, repeats and lost answers: each stored and delivered once', async () => {
  const ins = await h.createInstance('sales');
  const key = (await h.request('POST', `/instances/${ins}/keys`, { body: { scope: 'publish' } })).body.key;
  await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'], ignore_status: false });
  const webhook = documentedWebhook(ins, key);
  assert.equal(webhook.enabled, true);
  const sender = new EvolutionSender({
    ...webhook,
    initialDelayMs: 20,
    maxDelayMs: 200,
    // Herald stored these; the answer never reached Evolution, which tries again.
    loseAnswer: (attempt, raw) => attempt === 1 && raw.length % 3 === 0,
  });
  const bodies = EVOLUTION_EVENTS.map((f) => withS3(f.body, `${s3.base}/api/files`));
  // Evolution reports some things twice: the first few bodies again, in the same burst.
  const sent = await sender.sendAll([...bodies, ...bodies.slice(0, 12)]);
  const skipped = bodies.filter((b) => !webhook.events.includes(settingName(b.event)));
  assert.deepEqual(
    sent.flatMap((s, i) => (s === null ? [bodies[i % bodies.length].event] : [])).sort(),
    [
      ...skipped.map((b) => b.event),
      ...skipped.filter((b) => bodies.indexOf(b) < 12).map((b) => b.event),
    ].sort(),
    "only the events of the webhook's list are sent",
  );
  const posted = sent.filter((s) => s !== null);
  assert.ok(
    posted.every((s) => s.accepted?.success === true),
    JSON.stringify(posted.filter((s) => !s.accepted)),
  );
  assert.ok(
    posted.some((s) => s.answers[0] === 'lost' && s.answers.length === 2),
    'some answers were lost and retried',
  );
  const events = new Set(posted.flatMap((s) => s.accepted?.events.map((e: Obj) => e.event_id)));
  await receiver.waitFor(events.size, 30_000);
  const delivered = receiver.received.map((r) => r.body.event_id);
  assert.equal(new Set(delivered).size, delivered.length, 'no event delivered twice');
  assert.deepEqual(new Set(delivered), events);
  const list = (await h.request('GET', `/instances/${ins}/deliveries?limit=200`)).body.deliveries;
  assert.equal(list.length, events.size, 'one delivery per event');
  // The connection updates' newest date_time is the QR code's, whatever order the burst was stored in.
  const instance = await eventually(async () => {
    const i = (await h.request('GET', `/instances/${ins}`)).body.instance;
    return i.status === 'SCAN_QR_CODE' ? i : undefined;
  });
  assert.equal(instance.status, 'SCAN_QR_CODE');
});

test('the answers Evolution does not retry (401, 403, 404, 400) are final: one attempt, then dropped', async () => {
  const ins = await h.createInstance();
  const other = await h.createInstance();
  const keyOfOther = (await h.request('POST', `/instances/${other}/keys`)).body.key;
  const base = `${h.url}/instances`;
  const body = evolutionBody('connection.update', { state: 'open' });
  const cases: [string, Record<string, string>, Obj, number][] = [
    [`${base}/${ins}/engine/evolution`, { Authorization: 'Bearer hk_wrong' }, body, 401],
    [`${base}/${ins}/engine/evolution`, { Authorization: `Bearer ${keyOfOther}` }, body, 403],
    [`${base}/ins_doesnotexist/engine/evolution`, { Authorization: `Bearer ${ADMIN_KEY}` }, body, 404],
    [
      `${base}/${ins}/engine/evolution`,
      { Authorization: `Bearer ${ADMIN_KEY}` },
      { event: 'messages.upsert', data: {} },
      400,
    ],
  ];
  for (const [url, headers, b, status] of cases) {
    const sender = new EvolutionSender({ url, headers, initialDelayMs: 10 });
    const sent = await sender.send(b);
    assert.deepEqual(sent?.answers, [status], url);
    assert.equal(sent?.dropped, true);
  }
});
