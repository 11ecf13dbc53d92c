/** SPEC §3: keys and signing secrets never appear in a log line, even at the most verbose level. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';
import { ADMIN_KEY, startTestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

test('no key or secret reaches the logs', async () => {
  let logs = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs += chunk.toString();
      done();
    },
  });
  const h = await startTestHerald({ LOG_LEVEL: 'trace' }, { logger: pino({ level: 'trace' }, sink) });
  const receiver = await TestReceiver.start();
  receiver.answer = (_req, n) => (n === 0 ? { status: 500 } : { status: 200 });
  try {
    const ins = await h.createInstance();
    const { key } = (await h.request('POST', `/instances/${ins}/keys`)).body;
    const secret = 'whsec_never_in_a_log_line';
    await h.createWebhook(ins, { destination_url: receiver.url, events: ['*'], client_sign_secret: secret });
    await h.request('GET', `/instances/${ins}/webhooks`, { key });
    await h.request('GET', '/instances', { key: `${key}x` });
    await h.request('POST', '/instances', { key });
    await h.publish(ins, { event: 'session.status', payload: { status: 'WORKING' } });
    await receiver.waitFor(2);
    assert.ok(logs.length > 0, 'the logger was used');
    for (const s of [ADMIN_KEY, key, `${key}x`, secret])
      assert.ok(!logs.includes(s), `${s.slice(0, 8)}… in the logs`);
  } finally {
    await receiver.close();
    await h.close();
  }
});
