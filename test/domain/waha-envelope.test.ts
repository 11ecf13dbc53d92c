/** WAHA's webhook body read as the engine sends it (the envelope; payload rules are events.ts's). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { engineEventId, readWahaEnvelope } from '../../src/domain/waha-envelope.ts';

const body = {
  id: 'evt_01jn7k0d9x2c5m8v3b6n1q4w7e',
  timestamp: 1741249702485,
  event: 'message',
  session: 'default',
  metadata: { 'user.id': '123' },
  me: { id: '71111111111@c.us', pushName: '~' },
  payload: { id: 'x', fromMe: false },
  environment: { tier: 'CORE', version: '2023.10.12' },
  engine: 'WEBJS',
};

test('the id, timestamp, kind, payload and own phone are read; the engine’s fields are left behind', () => {
  assert.deepEqual(readWahaEnvelope(body), {
    event: {
      engineId: '01jn7k0d9x2c5m8v3b6n1q4w7e',
      event: 'message',
      timestamp: 1741249702485,
      payload: { id: 'x', fromMe: false },
      sessionPhone: '71111111111',
    },
  });
});

test('optional parts: no id, no timestamp, me null or a GOWS id with a device, a float time', () => {
  const read = (patch: Record<string, unknown>) => {
    const r = readWahaEnvelope({ ...body, ...patch });
    if ('errors' in r) throw new Error(JSON.stringify(r.errors));
    return r.event;
  };
  assert.equal(read({ id: undefined }).engineId, null);
  assert.equal(read({ id: '01jn7k' }).engineId, '01jn7k');
  assert.equal(read({ timestamp: undefined }).timestamp, null);
  assert.equal(read({ timestamp: 1741249702485.6 }).timestamp, 1741249702486);
  assert.equal(read({ me: null }).sessionPhone, null);
  assert.equal(read({ me: { id: '71111111111:3@s.whatsapp.net' } }).sessionPhone, '71111111111');
  assert.equal(read({ me: { id: '123@lid' } }).sessionPhone, null);
  assert.equal(read({ payload: null }).payload, null, 'the payload rules are the kind’s, not the envelope’s');
});

test('a broken envelope is refused field by field', () => {
  const errors = (patch: Record<string, unknown>) => {
    const r = readWahaEnvelope({ ...body, ...patch });
    return 'errors' in r ? r.errors.map((e) => `${e.field}: ${e.message}`) : [];
  };
  assert.deepEqual(errors({ event: undefined }), ['event: is required: the event kind, such as message']);
  assert.deepEqual(errors({ event: 7, id: 'a.b', timestamp: -1, me: 'x' }), [
    'event: is required: the event kind, such as message',
    'id: must be 1 to 100 letters, digits, _ or -, optionally after evt_',
    'timestamp: must be a time in milliseconds since the epoch',
    'me: must be an object whose id is a string',
  ]);
  const noPayload = { ...body } as Record<string, unknown>;
  delete noPayload.payload;
  assert.deepEqual('errors' in readWahaEnvelope(noPayload) ? readWahaEnvelope(noPayload) : null, {
    errors: [{ field: 'payload', message: 'is required' }],
  });
  assert.deepEqual(readWahaEnvelope([1]), {
    errors: [{ field: 'body', message: "must be a JSON object (WAHA's webhook body)" }],
  });
});

test('an engine event_id: the same for the same instance and envelope id, another at another instance, unique in form', () => {
  const a = engineEventId('ins_a', { envelopeId: '01jn7k0d9x2c5m8v3b6n1q4w7e' });
  assert.match(a, /^evt_[0-9a-hjkmnp-tv-z]{26}$/);
  assert.equal(engineEventId('ins_a', { envelopeId: '01jn7k0d9x2c5m8v3b6n1q4w7e' }), a);
  assert.notEqual(engineEventId('ins_b', { envelopeId: '01jn7k0d9x2c5m8v3b6n1q4w7e' }), a);
  // A request id that happens to equal an envelope id names another event.
  assert.notEqual(engineEventId('ins_a', { requestId: '01jn7k0d9x2c5m8v3b6n1q4w7e' }), a);
  assert.equal(
    engineEventId('ins_a', { requestId: 'b6f1c7e2' }),
    engineEventId('ins_a', { requestId: 'b6f1c7e2' }),
  );
});
