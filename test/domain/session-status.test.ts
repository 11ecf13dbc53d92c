/** Which session.status an instance shows: the newest by timestamp, a tie by the greater event_id (src/domain/session-status.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isNewerStatus } from '../../src/domain/session-status.ts';

test('a session.status is newer by its timestamp, whatever the event ids', () => {
  assert.equal(isNewerStatus({ at: 2, event_id: 'evt_a' }, { at: 1, event_id: 'evt_z' }), true);
  assert.equal(isNewerStatus({ at: 1, event_id: 'evt_z' }, { at: 2, event_id: 'evt_a' }), false);
});

test('at the same millisecond the greater event_id is newer; the same event is not newer than itself', () => {
  assert.equal(isNewerStatus({ at: 5, event_id: 'evt_b' }, { at: 5, event_id: 'evt_a' }), true);
  assert.equal(isNewerStatus({ at: 5, event_id: 'evt_a' }, { at: 5, event_id: 'evt_b' }), false);
  assert.equal(isNewerStatus({ at: 5, event_id: 'evt_a' }, { at: 5, event_id: 'evt_a' }), false);
  // By code unit, as the stores' binary collations order them: '_' and '-' are not skipped, 'Z' comes before 'a'.
  assert.equal(isNewerStatus({ at: 5, event_id: 'evt_a' }, { at: 5, event_id: 'evt_Z' }), true);
  assert.equal(isNewerStatus({ at: 5, event_id: 'evt_a_1' }, { at: 5, event_id: 'evt_a-9' }), true);
});

test('any session.status is newer than none (an instance no engine has reported on yet)', () => {
  assert.equal(isNewerStatus({ at: 0, event_id: 'evt_a' }, null), true);
});
