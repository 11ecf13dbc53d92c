/**
 * An instance's status and phone follow the newest session.status by its timestamp, whatever order WAHA's posts
 * commit in: WAHA sends each event the moment it happens, on its own connection, so a session's STARTING,
 * SCAN_QR_CODE and WORKING of one instant arrive at once. On both stores; on PostgreSQL also through two Heralds.
 */
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { wahaBody } from '../support/engine.ts';
import { ADMIN_KEY, startTestHerald, type TestHerald } from '../support/herald.ts';
import { onPostgres, schemaFor, schemaUrl } from '../support/postgres.ts';
import { WahaSender } from '../support/waha-sender.ts';

const OLD_PHONE = '15550001111';
const NEW_PHONE = '15550002222';
const T = 1_795_341_600_000;

/** A session's three changes of one instant, oldest first: the old number's session restarted, re-linked. */
const changes = () => [
  wahaBody('session.status', { status: 'STARTING' }, { timestamp: T + 1, me: { id: `${OLD_PHONE}@c.us` } }),
  wahaBody('session.status', { status: 'SCAN_QR_CODE' }, { timestamp: T + 2, me: null }),
  wahaBody('session.status', { status: 'WORKING' }, { timestamp: T + 3, me: { id: `${NEW_PHONE}@c.us` } }),
];

async function herald(t: TestContext, env: Record<string, string> = {}): Promise<TestHerald> {
  const h = await startTestHerald(env);
  t.after(() => h.close());
  return h;
}

const waha = (h: TestHerald, ins: string) =>
  new WahaSender({
    url: `${h.url}/instances/${ins}/engine/waha`,
    headers: { Authorization: `Bearer ${ADMIN_KEY}` },
    delayMs: 50,
  });

async function shown(h: TestHerald, ins: string) {
  const { status, body } = await h.request('GET', `/instances/${ins}`);
  assert.equal(status, 200, JSON.stringify(body));
  return [body.instance.status, body.instance.phone];
}

const accepted = (records: { answers: unknown[] }[]) =>
  assert.deepEqual(
    records.map((r) => r.answers),
    records.map(() => [202]),
  );

describe('the instance follows the newest session.status', () => {
  test('10 instances, the newest change of each committed first, the two older after it: all WORKING with the new number', async (t) => {
    const h = await herald(t);
    const instances = await Promise.all(Array.from({ length: 10 }, () => h.createInstance('order')));
    await Promise.all(
      instances.map(async (ins) => {
        const [starting, scanning, working] = changes();
        // Held back on purpose: the older two are posted only once the newest has committed (its 202).
        accepted([await waha(h, ins).send(working)]);
        accepted(await waha(h, ins).sendAll([scanning, starting]));
      }),
    );
    for (const ins of instances) assert.deepEqual(await shown(h, ins), ['WORKING', NEW_PHONE], ins);
  });

  test('10 instances × the three changes posted at once, newest first: all WORKING with the new number', async (t) => {
    const h = await herald(t);
    const instances = await Promise.all(Array.from({ length: 10 }, () => h.createInstance('at once')));
    const sent = await Promise.all(instances.map((ins) => waha(h, ins).sendAll(changes().reverse())));
    for (const records of sent) accepted(records);
    for (const ins of instances) assert.deepEqual(await shown(h, ins), ['WORKING', NEW_PHONE], ins);
  });

  test('a newer status without a phone leaves none; an older one with a phone, posted after, brings none back', async (t) => {
    const h = await herald(t);
    const ins = await h.createInstance('logout');
    const linked = wahaBody('session.status', { status: 'WORKING' }, { timestamp: T + 1 });
    const loggedOut = wahaBody('session.status', { status: 'SCAN_QR_CODE' }, { timestamp: T + 2, me: null });
    accepted([await waha(h, ins).send(linked)]);
    assert.deepEqual(await shown(h, ins), ['WORKING', OLD_PHONE]);
    accepted([await waha(h, ins).send(loggedOut)]);
    assert.deepEqual(await shown(h, ins), ['SCAN_QR_CODE', null]);
    // The old change arriving late under another envelope id is stored as an event of its own, but it is older.
    accepted([await waha(h, ins).send({ ...linked, id: 'evt_01retriedlinkedevent00000' })]);
    assert.deepEqual(await shown(h, ins), ['SCAN_QR_CODE', null]);
  });

  test('two changes of one millisecond: the greater envelope id wins, whichever commits first', async (t) => {
    const h = await herald(t);
    const instances = await Promise.all(Array.from({ length: 5 }, () => h.createInstance('tie')));
    await Promise.all(
      instances.map(async (ins, i) => {
        // The envelope ids of one instant in the engine's own order; Herald's event ids (derived per instance)
        // sort in another, so only the envelope id can tell them apart as the engine meant.
        const earlier = wahaBody(
          'session.status',
          { status: 'SCAN_QR_CODE' },
          { id: `evt_0${i}a`, timestamp: T },
        );
        const later = wahaBody('session.status', { status: 'WORKING' }, { id: `evt_0${i}b`, timestamp: T });
        accepted([await waha(h, ins).send(later)]);
        accepted([await waha(h, ins).send(earlier)]);
      }),
    );
    for (const ins of instances) assert.equal((await shown(h, ins))[0], 'WORKING', ins);
  });

  test('two Heralds on one PostgreSQL: the newest committed through one, the older through the other after it', {
    skip: onPostgres ? false : 'several Heralds share a store only on PostgreSQL',
  }, async (t) => {
    // Every process on one database seals with one key.
    const SECRET_KEY = 'a'.repeat(64);
    const first = await herald(t, { SECRET_KEY });
    const second = await herald(t, { SECRET_KEY, DATABASE_URL: schemaUrl(schemaFor(first.dataDir)) });
    const instances = await Promise.all(Array.from({ length: 5 }, () => first.createInstance('two')));
    await Promise.all(
      instances.map(async (ins) => {
        const [starting, scanning, working] = changes();
        accepted([await waha(first, ins).send(working)]);
        accepted(await waha(second, ins).sendAll([scanning, starting]));
      }),
    );
    for (const ins of instances) {
      assert.deepEqual(await shown(first, ins), ['WORKING', NEW_PHONE], ins);
      assert.deepEqual(await shown(second, ins), ['WORKING', NEW_PHONE], ins);
    }
  });
});
