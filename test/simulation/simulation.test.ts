import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import { EVENT_KINDS, validateKnownPayload, validatePayload } from '../../src/domain/events.ts';
import { seededRandom } from '../../src/domain/random.ts';
import { readWahaEnvelope } from '../../src/domain/waha-envelope.ts';
import { SessionSimulation, type SimulatedEvent } from '../../src/simulation/simulation.ts';
import { toWaha, type WahaSession } from '../../src/simulation/waha.ts';

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function run(seed: number, steps: number): SimulatedEvent[] {
  const sim = new SessionSimulation(seededRandom(seed), () => T0);
  return Array.from({ length: steps }, () => sim.next()).flat();
}

test('every simulated event passes the ingest rules of its kind', () => {
  for (const seed of [1, 2, 3]) {
    for (const e of run(seed, 400))
      assert.deepEqual(validatePayload(e.event, e.payload), [], JSON.stringify(e));
  }
});

test('the session starts STARTING → SCAN_QR_CODE → WORKING with its phone, then talks', () => {
  const events = run(7, 3);
  assert.deepEqual(
    events.slice(0, 3).map((e) => e.payload.status),
    ['STARTING', 'SCAN_QR_CODE', 'WORKING'],
  );
  assert.match(String(events[2].payload.phone), /^\d+$/);
  assert.ok(events.length > 3);
});

test('the opening shows every kind, every media status and both message.unknown error codes, at once', () => {
  const events = new SessionSimulation(seededRandom(11), () => T0).opening();
  // Every kind a session sends: Herald's operational kinds are its own, never published.
  const sessionKinds = EVENT_KINDS.filter((k) => !OPERATIONAL_KINDS.includes(k));
  assert.deepEqual([...new Set(events.map((e) => e.event))].sort(), sessionKinds.sort());
  const media = new Set(events.map((e) => (e.payload.media as { status?: string } | undefined)?.status));
  for (const s of ['ready', 'too_large', 'failed', 'outgoing', 'unavailable']) assert.ok(media.has(s), s);
  const codes = new Set(events.filter((e) => e.event === 'message.unknown').map((e) => e.payload.error_code));
  assert.deepEqual([...codes].sort(), ['TIMEOUT', 'WORKER_DIED']);
  assert.ok(
    events.some((e) => e.event === 'message' && e.payload.from === 'status@broadcast'),
    'a story',
  );
});

test('as WAHA sends it: every event in its envelope, passing the engine rules, no from_phone, media on the file server', () => {
  const session: WahaSession = {
    name: 'default',
    engine: 'WEBJS',
    me: null,
    fileUrl: (name, large) => `http://127.0.0.1:3000/api/files/${large ? 'large/' : ''}${name}`,
  };
  const sim = new SessionSimulation(seededRandom(3), () => T0);
  const bodies = [...sim.opening(), ...Array.from({ length: 200 }, () => sim.next()).flat()].flatMap((e) => {
    const body = toWaha(e, session, T0);
    return body ? [body] : [];
  });
  const kinds = new Set(bodies.map((b) => b.event));
  for (const kind of ['message.unknown', 'group.update', 'group.participants'])
    assert.equal(kinds.has(kind), false, kind);
  for (const body of bodies) {
    const read = readWahaEnvelope(body);
    assert.ok('event' in read, JSON.stringify(body));
    assert.deepEqual(validateKnownPayload(read.event.event, read.event.payload), [], JSON.stringify(body));
    assert.equal((body.payload as Record<string, unknown>).from_phone, undefined);
  }
  const working = bodies.find(
    (b) => b.event === 'session.status' && (b.payload as { status: string }).status === 'WORKING',
  );
  assert.match(String((working?.me as { id: string } | undefined)?.id), /^\d+@c\.us$/);
  const media = bodies.flatMap((b) =>
    (b.payload as { media?: unknown }).media === undefined ? [] : [(b.payload as { media: unknown }).media],
  );
  assert.ok(
    media.some((m) => m === null),
    'unavailable: media null',
  );
  assert.ok(
    media.some((m) => (m as { error?: unknown })?.error),
    'failed: an engine error',
  );
  assert.ok(
    media.some((m) => String((m as { url?: string })?.url).includes('/large/')),
    'too large: a large file',
  );
});

test('incoming messages are message and message.any; outgoing ones only message.any, then acks in order', () => {
  const events = run(5, 300);
  for (const [i, e] of events.entries()) {
    if (e.event === 'message') {
      assert.equal(e.payload.fromMe, false);
      assert.equal(events[i + 1].event, 'message.any');
      assert.equal(events[i + 1].payload.id, e.payload.id);
    }
  }
  const outgoing = events.filter((e) => e.event === 'message.any' && e.payload.fromMe === true);
  assert.ok(outgoing.length > 10);
  for (const m of outgoing) {
    const acks = events.filter((e) => e.event === 'message.ack' && e.payload.id === m.payload.id);
    const at = acks.map((a) => events.indexOf(a));
    assert.ok(
      at.every((i) => i > events.indexOf(m)),
      'acks come after the message',
    );
    assert.deepEqual(
      acks.map((a) => a.payload.ackName),
      ['SERVER', 'DEVICE', 'READ'].slice(0, acks.length),
    );
  }
});

test('the same seed replays the same activity; another seed does not', () => {
  assert.deepEqual(run(42, 50), run(42, 50));
  assert.notDeepEqual(run(42, 50), run(43, 50));
});
