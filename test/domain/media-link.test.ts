import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkLink, linkKey, signLink } from '../../src/domain/media-link.ts';
import { SecretBox } from '../../src/domain/secret-box.ts';
import { parseRange } from '../../src/media/byte-range.ts';

const KEY = linkKey(new SecretBox(Buffer.alloc(32, 7)));
const ID = 'med_01jd5q7h2k9x4m8n3p6r0t1v2w';
const AT = Date.parse('2026-11-22T10:00:00.250Z');

const parts = (url: string) => {
  const u = new URL(url);
  return [u.searchParams.get('expires') ?? undefined, u.searchParams.get('sig') ?? undefined] as const;
};

describe('signed media links', () => {
  test('the url carries expires (seconds, rounded up) and sig; expires_at is the same instant in ISO UTC', () => {
    const link = signLink(KEY, 'https://hooks.example.com', ID, AT);
    assert.match(
      link.url,
      /^https:\/\/hooks\.example\.com\/media\/med_\w+\?expires=1795341601&sig=[\w-]{43}$/,
    );
    assert.equal(link.expires_at, '2026-11-22T10:00:01.000Z');
  });

  test('valid until expires_at, expired from then on, forbidden when anything is changed', () => {
    const [expires, sig] = parts(signLink(KEY, 'http://h', ID, AT).url);
    const end = Date.parse('2026-11-22T10:00:01Z');
    assert.equal(checkLink(KEY, ID, expires, sig, end - 1), 'ok');
    assert.equal(checkLink(KEY, ID, expires, sig, end), 'expired');
    assert.equal(checkLink(KEY, ID.replace('w', 'x'), expires, sig, end - 1), 'forbidden');
    assert.equal(checkLink(KEY, ID, String(Number(expires) + 1), sig, end - 1), 'forbidden');
    assert.equal(checkLink(KEY, ID, expires, `${sig}x`, end - 1), 'forbidden');
    assert.equal(checkLink(KEY, ID, expires, undefined, end - 1), 'forbidden');
    assert.equal(checkLink(KEY, ID, '1e12', sig, end - 1), 'forbidden');
    assert.equal(
      checkLink(linkKey(new SecretBox(Buffer.alloc(32, 8))), ID, expires, sig, end - 1),
      'forbidden',
    );
  });

  test('an expired link whose signature was changed is forbidden, not gone', () => {
    const [expires] = parts(signLink(KEY, 'http://h', ID, AT).url);
    assert.equal(checkLink(KEY, ID, expires, 'A'.repeat(43), AT + 3600_000), 'forbidden');
  });
});

describe('byte ranges (RFC 9110 §14)', () => {
  const cases: [string | undefined, number, ReturnType<typeof parseRange>][] = [
    [undefined, 100, null],
    ['bytes=0-9', 100, { start: 0, end: 9 }],
    ['bytes=90-', 100, { start: 90, end: 99 }],
    ['bytes=95-200', 100, { start: 95, end: 99 }],
    ['bytes=-10', 100, { start: 90, end: 99 }],
    ['bytes=-500', 100, { start: 0, end: 99 }],
    ['bytes=100-', 100, 'unsatisfiable'],
    ['bytes=-0', 100, 'unsatisfiable'],
    ['bytes=0-0', 0, 'unsatisfiable'],
    ['bytes=9-3', 100, null],
    ['bytes=0-1,5-6', 100, null],
    ['items=0-1', 100, null],
    ['bytes=-', 100, null],
  ];
  for (const [header, size, expected] of cases) {
    test(`${header} of ${size} bytes`, () => assert.deepEqual(parseRange(header, size), expected));
  }
});
