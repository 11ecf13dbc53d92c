/** A webhook's payload filter: a table of delivery bodies and expressions, and the malformed ones refused. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkFilter, MAX_FILTER_BYTES, matches } from '../../src/domain/filter.ts';

const body = (event: string, payload: Record<string, unknown>) => ({
  event_id: 'evt_1',
  event,
  instance_id: 'ins_1',
  timestamp: 1763719200000,
  payload,
});
const privateIn = body('message', { from: '491701234567@c.us', fromMe: false, media: { status: 'ready' } });
const groupIn = body('message', { from: '120363041234567890@g.us', fromMe: false, participant: '4917@c.us' });
const sent = body('message.any', { from: '15550001111@c.us', fromMe: true });
const ack = body('message.ack', { from: '491701234567@c.us', ack: 3, presences: [{ participant: 'a' }] });

describe('matches', () => {
  // [expression, which of privateIn, groupIn, sent, ack pass]
  const table: [string, Record<string, unknown>, boolean[]][] = [
    ['the empty filter passes everything', {}, [true, true, true, true]],
    ['a literal is equality', { 'payload.fromMe': false }, [true, true, false, false]],
    [
      'the SPEC example',
      {
        'payload.from': { $prefix: '49' },
        'payload.fromMe': false,
        $or: [{ event: 'message' }, { event: 'message.ack' }],
      },
      [true, false, false, false],
    ],
    ['$eq', { event: { $eq: 'message.ack' } }, [false, false, false, true]],
    ['$ne: an absent field is unequal', { 'payload.fromMe': { $ne: true } }, [true, true, false, true]],
    ['$in', { event: { $in: ['message.any', 'message.ack'] } }, [false, false, true, true]],
    [
      '$in: an absent field is in no list',
      { 'payload.participant': { $in: [null, '4917@c.us'] } },
      [false, true, false, false],
    ],
    ['$nin', { event: { $nin: ['message'] } }, [false, false, true, true]],
    ['$exists true', { 'payload.media': { $exists: true } }, [true, false, false, false]],
    ['$exists false', { 'payload.participant': { $exists: false } }, [true, false, true, true]],
    ['$prefix only on strings', { 'payload.ack': { $prefix: '3' } }, [false, false, false, false]],
    ['a nested path', { 'payload.media.status': 'ready' }, [true, false, false, false]],
    ['a number steps into an array', { 'payload.presences.0.participant': 'a' }, [false, false, false, true]],
    [
      '$and',
      { $and: [{ 'payload.fromMe': false }, { 'payload.from': { $prefix: '1203' } }] },
      [false, true, false, false],
    ],
    [
      '$or of $and',
      {
        $or: [
          { $and: [{ event: 'message' }, { 'payload.participant': { $exists: true } }] },
          { 'payload.ack': 3 },
        ],
      },
      [false, true, false, true],
    ],
    [
      'top-level fields',
      { instance_id: 'ins_1', timestamp: { $in: [1763719200000] } },
      [true, true, true, true],
    ],
    ['null is a literal, absent is not null', { 'payload.participant': null }, [false, false, false, false]],
    ['a path through a scalar is absent', { 'payload.from.x': { $exists: false } }, [true, true, true, true]],
  ];
  for (const [name, filter, expected] of table) {
    test(name, () => {
      assert.deepEqual(checkFilter(filter), [], 'a valid filter');
      assert.deepEqual(
        [privateIn, groupIn, sent, ack].map((b) => matches(filter, b)),
        expected,
      );
    });
  }
  test('inherited properties are not fields', () => {
    assert.equal(matches({ 'payload.constructor': { $exists: true } }, privateIn), false);
  });
});

describe('checkFilter refuses what it cannot evaluate, naming the key and the rule', () => {
  const table: [string, unknown, string, RegExp][] = [
    ['not an object', ['x'], 'filter', /must be an object of conditions/],
    ['a string', 'payload.fromMe', 'filter', /must be an object/],
    [
      'an unknown operator',
      { event: { $regex: 'm.*' } },
      'filter.event',
      /^has "\$regex", which is not an operator; operators: \$eq, \$ne, \$in, \$nin, \$exists, \$prefix$/,
    ],
    ['two operators in one', { event: { $eq: 'a', $ne: 'b' } }, 'filter.event', /one operator/],
    ['an object literal', { 'payload.media': { status: 'ready' } }, 'filter.payload.media', /one operator/],
    ['an array literal', { event: ['message'] }, 'filter.event', /string, number, boolean or null/],
    ['$in not an array', { event: { $in: 'message' } }, 'filter.event', /\$in takes an array/],
    ['$nin of objects', { event: { $nin: [{}] } }, 'filter.event', /\$nin takes an array/],
    ['$exists a string', { event: { $exists: 'yes' } }, 'filter.event', /\$exists takes true or false/],
    [
      '$prefix a number',
      { 'payload.from': { $prefix: 49 } },
      'filter.payload.from',
      /\$prefix takes a string/,
    ],
    ['$eq an object', { event: { $eq: {} } }, 'filter.event', /\$eq takes a string/],
    ['$or not an array', { $or: { event: 'message' } }, 'filter.$or', /non-empty array of filter objects/],
    ['$and empty', { $and: [] }, 'filter.$and', /non-empty array/],
    ['an unknown combinator', { $not: { event: 'message' } }, 'filter.$not', /not a known combinator/],
    ['a bad path', { 'payload..from': 'x' }, 'filter.payload..from', /dotted path/],
    ['a space in a path', { 'pay load': 'x' }, 'filter.pay load', /dotted path/],
    [
      'nested errors are found',
      { $or: [{ event: 'message' }, { event: { $in: 3 } }] },
      'filter.$or[1].event',
      /\$in takes an array/,
    ],
    ['NaN is no literal', { 'payload.ack': Number.NaN }, 'filter.payload.ack', /string, number/],
  ];
  for (const [name, filter, field, rule] of table) {
    test(name, () => {
      const errors = checkFilter(filter);
      assert.equal(errors[0]?.field, field, JSON.stringify(errors));
      assert.match(errors[0].message, rule);
    });
  }
  test(`at most ${MAX_FILTER_BYTES} bytes`, () => {
    const big = { event: { $in: Array.from({ length: 400 }, (_, i) => `message.kind.${i}`) } };
    assert.match(checkFilter(big)[0].message, /at most 4096 bytes as JSON, got \d+/);
  });
});
