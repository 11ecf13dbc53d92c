/**
 * Copy-as-curl, run for real: the command the delivery detail shows, executed by bash with curl and openssl,
 * reaches a receiver with the exact body and a signature that verifies (seed §5.1).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { verify } from '../../packages/receiver/src/index.ts';
import { curlCommand, shellQuote } from '../../src/ui/assets/curl.ts';
import { TestReceiver } from '../support/receiver.ts';

const run = promisify(execFile);
const tools = ['/usr/bin/curl', '/usr/bin/openssl', '/bin/bash'].filter((t) => !existsSync(t));
const SECRET = "whsec_it's a secret";
// Quotes, a backslash, a dollar, a newline escape and non-ASCII: what must pass the shell untouched.
const BODY = JSON.stringify({
  event_id: 'evt_curl0000000000000001',
  event: 'message',
  instance_id: 'ins_curl0000000000000001',
  timestamp: 1_763_700_000_000,
  payload: { body: `it's "quoted" \\ $HOME \`id\` line\nnext — ünïcode 🎉` },
});

describe('copy as curl', { skip: tools.length ? `missing ${tools.join(', ')}` : false }, () => {
  let receiver: TestReceiver;
  before(async () => {
    receiver = await TestReceiver.start();
  });
  after(() => receiver.close());

  const command = (signed: boolean) =>
    curlCommand({
      url: receiver.url,
      body: BODY,
      eventId: 'evt_curl0000000000000001',
      userAgent: 'Herald/0.1.0',
      signed,
    });

  it('replays the exact body with the documented headers, signed with a fresh timestamp', async () => {
    await run('/bin/bash', ['-c', command(true)], {
      env: { PATH: process.env.PATH, WEBHOOK_SECRET: SECRET },
    });
    const [got] = await receiver.waitFor(1);
    assert.equal(got.rawBody.toString('utf8'), BODY);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'Herald/0.1.0');
    assert.equal(got.headers['x-service-event-id'], 'evt_curl0000000000000001');
    const result = verify({ secret: SECRET, headers: got.headers, rawBody: got.rawBody });
    assert.ok(result.ok, JSON.stringify(result));
  });

  it('sends no signature for an unsigned webhook', async () => {
    await run('/bin/bash', ['-c', command(false)], { env: { PATH: process.env.PATH } });
    const got = (await receiver.waitFor(2))[1];
    assert.equal(got.rawBody.toString('utf8'), BODY);
    assert.equal(got.headers['x-service-signature'], undefined);
    assert.match(String(got.headers['x-service-timestamp']), /^\d{10}$/);
  });

  it('quotes any text as one literal shell word', async () => {
    const tricky = `a'b"c$d\`e\\f\ng`;
    const { stdout } = await run('/bin/bash', ['-c', `printf '%s' ${shellQuote(tricky)}`]);
    assert.equal(stdout, tricky);
  });
});
