/**
 * Real WAHA webhook bodies (test/fixtures/waha-events.ts: WAHA's documentation and engine code, WEBJS, NOWEB and
 * GOWS, each cited there) posted to the engine endpoint as WAHA posts them: every one is accepted, delivered, and
 * normalised into the delivery format — from_phone filled, media in the seed's states, the session's phone from
 * `me`, stories only where ignore_status is false, kinds outside the catalog only to `*` — while every field the
 * rules do not name arrives exactly as the engine sent it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import { EVENT_KINDS } from '../../src/domain/events.ts';
import { engineEventId } from '../../src/domain/waha-envelope.ts';
import { completed, WAHA_EVENTS, type WahaFixture } from '../fixtures/waha-events.ts';
import { EngineFiles, postWaha } from '../support/engine.ts';
import { startTestHerald, type TestHerald } from '../support/herald.ts';
import { TestReceiver } from '../support/receiver.ts';

type Obj = Record<string, any>;

/**
 * What normalising changes, per fixture; every other fixture's payload is delivered unchanged.
 * from_phone: the digits Herald adds (null: none; a hidden-id sender's from the phone id the engine sends beside
 * it); media: the delivered status; phone: what a session.status gets from `me`.
 */
const EXPECTED: Record<string, { from_phone?: string | null; media?: string | null; phone?: string }> = {
  'session.status WORKING WEBJS': { phone: '7911111' },
  'session.status FAILED NOWEB (logged out)': { phone: '14155550100' },
  'message text WEBJS (docs example)': { from_phone: '11111111111' },
  'message text WEBJS (current converter)': { from_phone: '14155550123', media: null },
  'message text NOWEB': { from_phone: '14155550123', media: null },
  'message text GOWS': { from_phone: '14155550123', media: null },
  'message image WEBJS (docs media example)': { from_phone: '11111111111', media: 'ready' },
  'message image WEBJS with S3 media': { from_phone: '22222222222', media: 'outgoing' },
  'message image NOWEB (current local storage url)': { from_phone: '14155550123', media: 'ready' },
  'message document WEBJS (docs, filename)': { from_phone: '11111111111', media: 'ready' },
  'message document GOWS (filename)': { from_phone: '14155550123', media: 'ready' },
  'message video GOWS media download error': { from_phone: '14155550123', media: 'failed' },
  'message image WEBJS hasMedia true media null': { from_phone: '14155550123', media: 'unavailable' },
  'message video NOWEB not downloaded (media.url null)': { from_phone: '14155550123', media: 'unavailable' },
  'message sticker NOWEB (body null)': { from_phone: '14155550123', media: 'ready' },
  'message sticker WEBJS (body empty string)': { from_phone: '14155550123', media: 'ready' },
  'message sticker GOWS (no body key)': { from_phone: '14155550123', media: 'ready' },
  'message group WEBJS (participant)': { from_phone: '14155550123', media: null },
  'message group NOWEB (participant)': { from_phone: '14155550123', media: null },
  'message group GOWS (@lid participant, to = sender)': { from_phone: '14155550123', media: null },
  'message DM NOWEB from @lid sender': { from_phone: '14155550123', media: null },
  'message group NOWEB (@lid participant, participantAlt)': { from_phone: '14155550177', media: null },
  'message DM GOWS from @lid sender (SenderAlt)': { from_phone: '14155550199', media: null },
  'message DM WEBJS from @lid sender (no phone beside it)': { from_phone: null, media: null },
  'message channel NOWEB (newsletter)': { from_phone: null },
  'message location WEBJS (numeric coords, body = thumbnail)': { from_phone: '14155550123', media: null },
  'message location NOWEB (string coords, body null)': { from_phone: '14155550123', media: null },
  'message vCard GOWS (no body key)': { from_phone: '14155550123', media: null },
  'message reply NOWEB (docs replyTo with media)': { from_phone: '11111111111' },
  'message reply WEBJS (replyTo without id/participant/hasMedia)': { from_phone: '14155550123', media: null },
  'message status@broadcast NOWEB (docs status example)': { from_phone: null, media: 'ready' },
  'message status@broadcast GOWS (to = author)': { from_phone: '14155550123', media: null },
  'message status@broadcast NOWEB from @lid author (remoteJidAlt)': {
    from_phone: '14155550188',
    media: null,
  },
  'message.any NOWEB outgoing via API (ack 0 PENDING)': { from_phone: '14155550100', media: null },
  'message.any GOWS outgoing image via API (ack 1 SERVER)': { from_phone: '14155550100', media: 'outgoing' },
};

let h: TestHerald;
let files: EngineFiles;
let ins: string;
/** `*` with stories; `*` without stories; every catalog kind by name, with stories. */
const receivers: Record<'all' | 'noStories' | 'catalog', TestReceiver> = {} as never;

before(async () => {
  files = await EngineFiles.start();
  h = await startTestHerald({ ENGINE_MEDIA_PREFIXES: files.prefix });
  ins = await h.createInstance('WAHA session');
  for (const [name, events, ignore_status] of [
    ['all', ['*'], false],
    ['noStories', ['*'], true],
    ['catalog', [...EVENT_KINDS], false],
  ] as const) {
    receivers[name] = await TestReceiver.start();
    await h.createWebhook(ins, { destination_url: receivers[name].url, events, ignore_status });
  }
});
after(async () => {
  await Promise.all([files.close(), ...Object.values(receivers).map((r) => r.close())]);
  await h.close();
});

/** The engine's file server: a fixture's media url now points at a real one on 127.0.0.1, with the same path. */
function serveMedia(body: Obj): void {
  const media = body.payload?.media;
  if (typeof media?.url !== 'string') return;
  const url = new URL(media.url);
  const bytes = Buffer.from(`engine file ${url.pathname}`);
  const served = files.serve(url.pathname.replace(/^\/api\/files\//, ''), { bytes, type: media.mimetype });
  media.url = served + url.search;
}

test(`${WAHA_EVENTS.length} real WAHA bodies, all three engines, every kind: each accepted, delivered and normalised`, async () => {
  // Herald's own kinds, which no engine sends: message.unknown, the older group shapes, the operational events.
  const heraldOnly = ['message.unknown', 'group.update', 'group.participants', ...OPERATIONAL_KINDS];
  const kinds = new Set(WAHA_EVENTS.map((f) => f.body.event));
  for (const kind of EVENT_KINDS.filter((k) => !heraldOnly.includes(k)))
    assert.ok(kinds.has(kind), `a fixture of ${kind}`);
  const sent = new Map<string, { fixture: WahaFixture; body: Obj }>();
  for (const fixture of WAHA_EVENTS) {
    const body = completed(fixture);
    serveMedia(body);
    const res = await postWaha(h.url, ins, body);
    assert.equal(res.status, 202, `${fixture.name}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.event_id, engineEventId(ins, { envelopeId: body.id.slice(4) }), fixture.name);
    sent.set(res.body.event_id, { fixture, body });
  }
  const story = (b: Obj) =>
    JSON.stringify([b.payload.from, b.payload.to, b.payload.participant]).includes('status@broadcast');
  const unlisted = (b: Obj) => !EVENT_KINDS.includes(b.event);
  const count = (keep: (b: Obj) => boolean) => [...sent.values()].filter(({ body }) => keep(body)).length;
  const [all, noStories, catalog] = await Promise.all([
    receivers.all.waitFor(sent.size, 30_000),
    receivers.noStories.waitFor(
      count((b) => !story(b)),
      30_000,
    ),
    receivers.catalog.waitFor(
      count((b) => !unlisted(b)),
      30_000,
    ),
  ]);

  for (const got of all) {
    const { fixture, body } = sent.get(got.body.event_id) as { fixture: WahaFixture; body: Obj };
    const what = fixture.name;
    assert.deepEqual(
      Object.keys(got.body),
      ['event_id', 'event', 'instance_id', 'timestamp', 'payload'],
      what,
    );
    assert.equal(got.body.event, body.event, what);
    assert.equal(got.body.timestamp, body.timestamp, what);
    const expected = EXPECTED[what] ?? {};
    const delivered: Obj = got.body.payload;
    const { from_phone, media, ...rest } =
      typeof delivered === 'object' && delivered !== null ? delivered : {};
    if ('from_phone' in expected)
      assert.equal(from_phone, expected.from_phone ?? undefined, `${what}: from_phone`);
    if ('media' in expected)
      assert.equal(media === null ? null : media?.status, expected.media, `${what}: media`);
    if (expected.media === 'ready') {
      const download = await fetch(media.url);
      assert.equal(download.status, 200, `${what}: Herald's link`);
      assert.equal(await download.text(), `engine file ${new URL(body.payload.media.url).pathname}`, what);
    }
    if (expected.phone) assert.equal(delivered.phone, expected.phone, `${what}: phone`);
    // Everything else arrives as the engine sent it: nulls, floats, emoji, _data, ids.
    const original: Obj =
      typeof body.payload === 'object' && body.payload !== null ? { ...body.payload } : {};
    if ('media' in expected) delete original.media;
    if (expected.phone) delete rest.phone;
    if (!('from_phone' in expected))
      assert.equal(from_phone, original.from_phone, `${what}: from_phone untouched`);
    delete original.from_phone;
    if (!('media' in expected) && original.media !== undefined) rest.media = media;
    if (typeof delivered === 'object' && delivered !== null)
      assert.deepEqual(rest, original, `${what}: passed through`);
    else assert.deepEqual(delivered, body.payload, what);
  }
  assert.ok(
    noStories.every((r) => !story(sent.get(r.body.event_id)?.body ?? {})),
    'no story without ignore_status false',
  );
  assert.ok(
    catalog.every((r) => EVENT_KINDS.includes(r.body.event)),
    'unlisted kinds only to *',
  );
});
