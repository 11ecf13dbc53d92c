/**
 * A destination_url with a control character, a space or a backslash is a 400 naming destination_url and the
 * rule, for HTTP and broker URLs alike, on create and on PATCH: the URL parser would drop tabs and line breaks,
 * trim spaces and read `\` as `/`, so that the URL saved and sent would not be the one written.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestHerald, type TestHerald } from '../support/herald.ts';

let h: TestHerald;
let guarded: TestHerald;
let ins: string;
before(async () => {
  [h, guarded] = await Promise.all([
    startTestHerald(),
    startTestHerald({ ALLOW_PRIVATE_DESTINATIONS: 'false' }),
  ]);
  ins = await h.createInstance('characters');
});
after(() => Promise.all([h.close(), guarded.close()]));

/** Each refused character, with the words the message names it by. */
const CHARACTERS: [string, RegExp][] = [
  ['\0', /NUL \(U\+0000\)/],
  ['\t', /a tab \(U\+0009\)/],
  ['\n', /a line feed \(LF\) \(U\+000A\)/],
  ['\r', /a carriage return \(CR\) \(U\+000D\)/],
  [' ', /a space \(U\+0020\)/],
  ['\\', /a backslash \(U\+005C\)/],
  ['\u001b', /U\+001B/],
  ['\u007f', /U\+007F/],
  ['\u0085', /U\+0085/],
  ['\u00a0', /U\+00A0/],
  ['\u2028', /U\+2028/],
];

const URLS = [
  'http://127.0.0.1:9/hook',
  'amqp://guest:guest@127.0.0.1:5672/?exchange=herald&routing_key=events',
  'nats://127.0.0.1:4222/herald.events',
  'redis://127.0.0.1:6379/0?stream=herald',
];

const RULE =
  /^destination_url: must not contain a control character, a space or a backslash \(percent-encode them\): found /;

async function refused(server: TestHerald, method: string, path: string, url: string, character: RegExp) {
  const res = await server.request(method, path, { body: { destination_url: url, events: ['message'] } });
  assert.equal(res.status, 400, `${JSON.stringify(url)}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'invalid_request');
  assert.deepEqual(
    res.body.error.details.map((d: { field: string }) => d.field),
    ['destination_url'],
    JSON.stringify(url),
  );
  assert.match(res.body.error.message, RULE, JSON.stringify(url));
  assert.match(res.body.error.message, character, JSON.stringify(url));
}

describe('destination_url characters', () => {
  it('each character is refused inside, at the start and at the end of an HTTP or broker URL', async () => {
    for (const url of URLS) {
      const cut = url.length - 4;
      for (const [ch, words] of CHARACTERS) {
        for (const spelled of [`${url.slice(0, cut)}${ch}${url.slice(cut)}`, `${ch}${url}`, `${url}${ch}`])
          await refused(h, 'POST', `/instances/${ins}/webhooks`, spelled, words);
      }
    }
    assert.deepEqual(
      (await h.request('GET', `/instances/${ins}/webhooks`)).body.webhooks,
      [],
      'none was saved',
    );
  });

  it('the message says where the character is', async () => {
    await refused(h, 'POST', `/instances/${ins}/webhooks`, 'http://127.0.0.1:9/a b', /at character 21$/);
  });

  it('a backslash that the parser would read as a path, or a host, is refused before any host is judged', async () => {
    // Herald's parser reads `\` as `/` (host 127.0.0.1, path /@evil.example/); a person or another tool reading
    // the same text may take evil.example for the host. Refused as written, whatever it would resolve to.
    for (const url of ['http://127.0.0.1\\@evil.example/', 'http:\\\\127.0.0.1\\hook'])
      await refused(
        guarded,
        'POST',
        `/instances/${await guarded.createInstance()}/webhooks`,
        url,
        /backslash/,
      );
  });

  it('on PATCH too, leaving the webhook as it was', async () => {
    const id = await h.createWebhook(ins, { destination_url: URLS[0], events: ['message'] });
    const path = `/instances/${ins}/webhooks/${id}`;
    for (const [ch, words] of CHARACTERS) await refused(h, 'PATCH', path, `${URLS[0]}${ch}x`, words);
    assert.equal((await h.request('GET', path)).body.webhook.destination_url, URLS[0]);
    // Percent-encoded, the same characters are an ordinary URL.
    const encoded = `${URLS[0]}/a%20b%5Cc%09`;
    const ok = await h.request('PATCH', path, { body: { destination_url: encoded, events: ['message'] } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(ok.body.webhook.destination_url, encoded);
  });

  it('other complaints of the same body are listed beside it', async () => {
    const res = await h.request('POST', `/instances/${ins}/webhooks`, {
      body: {
        destination_url: 'http://127.0.0.1:9/a\tb',
        events: ['mesage'],
        headers: { Expect: '100-continue' },
      },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(
      res.body.error.details.map((d: { field: string }) => d.field),
      ['destination_url', 'events[0]', 'headers.Expect'],
    );
  });
});
