/**
 * The event catalog's JSON Schemas (the API reference's per-kind payloads) agree with the rules that validate
 * events: every sample and every real WAHA body (WEBJS, NOWEB, GOWS) passes both, as published and as delivered,
 * and payloads the rules refuse are refused by the schema too. A standard validator (Ajv) reads the schemas, as a
 * user's tooling would.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OPERATIONAL_KINDS } from '../../src/domain/event-kinds.ts';
import { EVENT_KINDS, payloadSchema, validateKnownPayload } from '../../src/domain/events.ts';
import { normalise } from '../../src/domain/normalise.ts';
import { samplePayload } from '../../src/domain/samples.ts';
import { readWahaEnvelope } from '../../src/domain/waha-envelope.ts';
import { completed, WAHA_EVENTS } from '../fixtures/waha-events.ts';
import { messagePayload } from '../support/herald.ts';

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats.default(ajv);
const validators = new Map(EVENT_KINDS.map((kind) => [kind, ajv.compile(payloadSchema(kind))]));
const schemaAccepts = (kind: string, payload: unknown) => {
  const validate = validators.get(kind);
  assert.ok(validate, kind);
  const ok = validate(payload);
  return ok ? true : JSON.stringify(validate.errors);
};

test('each kind has a schema, and its sample passes it and the rules alike', () => {
  for (const kind of EVENT_KINDS) {
    // Herald's own are never published, so no rule takes them (events.test.ts): the schema alone describes them.
    if (!OPERATIONAL_KINDS.includes(kind))
      assert.deepEqual(validateKnownPayload(kind, samplePayload(kind)), [], kind);
    assert.equal(schemaAccepts(kind, samplePayload(kind)), true, kind);
  }
});

test('every real WAHA body passes its kind’s schema, as the engine sent it and as Herald delivers it', () => {
  let checked = 0;
  for (const fixture of WAHA_EVENTS) {
    const read = readWahaEnvelope(completed(fixture));
    assert.ok('event' in read, fixture.name);
    const { event: kind, payload, sessionPhone } = read.event;
    if (!validators.has(kind)) continue; // outside the catalog: delivered to "*" as it is, no schema
    assert.equal(schemaAccepts(kind, payload), true, `${fixture.name} as sent`);
    const delivered = normalise(kind, payload as Record<string, unknown>, sessionPhone).payload;
    assert.equal(schemaAccepts(kind, delivered), true, `${fixture.name} as delivered`);
    checked++;
  }
  assert.ok(checked >= 80, `${checked} bodies checked`);
});

test('what the rules refuse, the schema refuses', () => {
  const refused: [string, unknown][] = [
    ['message', messagePayload({ id: undefined })],
    ['message', messagePayload({ fromMe: 'no' })],
    ['message', messagePayload({ from_phone: '+49 170' })],
    ['message', messagePayload({ hasMedia: true, media: 'a.jpg' })],
    ['message', messagePayload({ hasMedia: true, media: { status: 'lost' } })],
    ['message.any', messagePayload({ hasMedia: true, media: { url: 'ftp://files.example/a.jpg' } })],
    ['message.ack', { id: 'x', ack: 7 }],
    ['message.ack', { ack: 1 }],
    ['session.status', { status: 'working' }],
    ['session.status', { status: 'WORKING', phone: 4915 }],
    ['message.reaction', { id: 'x', reaction: { text: '👍' } }],
    ['message.reaction', { id: 'x' }],
    [
      'message.unknown',
      { message_id: 'x', client_reference: 'r', to: '1', type: 't', error_code: 'TIMEOUT' },
    ],
    [
      'message.unknown',
      { message_id: 'msg_1', client_reference: 'r', to: '1', type: 't', error_code: 'OOPS' },
    ],
    ['message.revoked', { id: 'x', from: 'a@c.us' }],
    ['message.revoked', { after: 'gone', before: null }],
    ['message.edited', { body: 'new' }],
  ];
  for (const [kind, payload] of refused) {
    const rules = validateKnownPayload(kind, payload);
    assert.ok(rules.length > 0, `the rules accept ${kind} ${JSON.stringify(payload)}`);
    assert.notEqual(
      schemaAccepts(kind, payload),
      true,
      `the schema accepts ${kind} ${JSON.stringify(payload)}`,
    );
  }
});

test('fields the rules do not name pass both, and null stands for absent where a field is optional', () => {
  const payload = messagePayload({ _data: { any: ['thing'] }, to: null, participant: null, body: null });
  assert.deepEqual(validateKnownPayload('message', payload), []);
  assert.equal(schemaAccepts('message', payload), true);
});
