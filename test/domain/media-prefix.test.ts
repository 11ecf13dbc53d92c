/**
 * The rule that decides whether a media URL is under the operator's prefixes, against spellings an attacker would
 * try: every one that reaches anything but the prefix's folder is outside, or refused as spelt.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  effectivePrefixes,
  instancePrefixProblem,
  isUnder,
  mediaSource,
  normaliseMediaUrl,
  normalisePrefix,
} from '../../src/domain/media-prefix.ts';

const PREFIX = 'http://waha:3000/api/files/';
const keys = effectivePrefixes([PREFIX], null);
const under = (url: string, prefixes = keys) => isUnder(url, prefixes);
const why = (url: string) => {
  const n = normaliseMediaUrl(url);
  return 'why' in n ? n.why : null;
};

describe('a URL under a prefix', () => {
  test('a file in the folder, or deeper, with a query, is under it', () => {
    assert.equal(under('http://waha:3000/api/files/default/true_1@c.us_AB.jpeg'), true);
    assert.equal(under('http://waha:3000/api/files/x.jpeg?session=default'), true);
    assert.equal(under('http://waha:3000/api/files/x.jpeg#frag'), true);
  });

  test('the host as the parser gives it: case, trailing dot, IDNA and percent-encoding fold', () => {
    assert.equal(under('http://WAHA:3000/api/files/x.jpeg'), true);
    assert.equal(under('HTTP://Waha:3000/api/files/x.jpeg'), true);
    assert.equal(under('http://waha.:3000/api/files/x.jpeg'), true);
    assert.equal(under('http://w%61ha:3000/api/files/x.jpeg'), true);
    const idn = effectivePrefixes(['http://bücher.example/files/'], null);
    assert.equal(under('http://xn--bcher-kva.example/files/a', idn), true);
    assert.equal(under('http://BÜCHER.example/files/a', idn), true);
  });

  test('default ports are the same as none; another port is another server', () => {
    const plain = effectivePrefixes(['http://waha/api/files/', 'https://files.example/media/'], null);
    assert.equal(under('http://waha:80/api/files/x', plain), true);
    assert.equal(
      under('http://waha/api/files/x', effectivePrefixes(['http://waha:80/api/files/'], null)),
      true,
    );
    assert.equal(under('https://files.example:443/media/x', plain), true);
    assert.equal(under('http://waha:8080/api/files/x', plain), false);
    assert.equal(under('http://waha:3001/api/files/x'), false);
    assert.equal(under('http://waha/api/files/x'), false, 'port 80 is not port 3000');
  });

  test('another scheme, host, or look-alike host is outside', () => {
    assert.equal(under('https://waha:3000/api/files/x'), false);
    assert.equal(under('http://waha.evil.com:3000/api/files/x'), false);
    assert.equal(under('http://evilwaha:3000/api/files/x'), false);
    assert.equal(under('http://waha:3000.evil.com/api/files/x'), false);
  });

  test('user information is refused, whatever it says: http://waha:3000@evil/… goes to evil', () => {
    assert.equal(under('http://waha:3000@evil/api/files/x'), false);
    assert.equal(why('http://waha:3000@evil/api/files/x'), 'must not contain user information');
    assert.equal(why('http://user@waha:3000/api/files/x'), 'must not contain user information');
    assert.equal(why('http://@waha:3000/api/files/x'), 'must not contain user information');
  });

  test('a prefix is a folder: without its trailing slash it still does not match /api/filesX', () => {
    const bare = effectivePrefixes(['http://waha:3000/api/files'], null);
    assert.deepEqual(bare, ['http://waha:3000/api/files/']);
    assert.equal(under('http://waha:3000/api/files/x', bare), true);
    assert.equal(under('http://waha:3000/api/filesX/x', bare), false);
    assert.equal(under('http://waha:3000/api/files.json', bare), false);
    assert.equal(under('http://waha:3000/api/files', bare), false, 'the folder itself is no file');
  });

  test('dot segments and encoded separators are refused outright, in every spelling', () => {
    for (const url of [
      'http://waha:3000/api/files/../sessions',
      'http://waha:3000/api/files/./x',
      'http://waha:3000/api/files/..',
      'http://waha:3000/api/files/..;/sessions',
    ]) {
      assert.equal(why(url), 'must not have a "." or ".." segment in its path', url);
      assert.equal(under(url), false, url);
    }
    for (const [url, seen] of [
      ['http://waha:3000/api/files/%2e%2e/sessions', '%2e'],
      ['http://waha:3000/api/files/.%2E/sessions', '%2E'],
      ['http://waha:3000/api/files/..%2fsessions', '%2f'],
      ['http://waha:3000/api/files/..%5Csessions', '%5C'],
      ['http://waha:3000/api/files/%252e%252e/sessions', '%25'],
    ]) {
      assert.equal(why(url), `must not have an encoded "/", "\\", "." or "%" in its path (${seen})`, url);
      assert.equal(under(url), false, url);
    }
  });

  test('backslashes, spaces and control characters are refused: the parser would read them otherwise', () => {
    for (const url of [
      'http://waha:3000/api/files/..\\sessions',
      'http://waha:3000\\api\\files\\x',
      'http://waha:3000/api/files/.\t./sessions',
      'http://waha:3000/api/files/.\n./sessions',
      'http://waha:3000/api/files/a b',
    ]) {
      assert.match(
        why(url) ?? '',
        /^must not contain a control character, a space or a backslash \(percent-encode them\): found /,
        JSON.stringify(url),
      );
    }
  });

  test('only an absolute http(s) URL with a literal scheme://host', () => {
    for (const url of [
      'http:waha:3000/api/files/x',
      'http:///waha:3000/api/files/x',
      'ftp://waha/api/files/x',
      '/api/files/x',
    ]) {
      assert.equal(why(url), 'must be an absolute http or https URL', url);
    }
  });

  test('the form compared: scheme, host, explicit port, path; query and fragment left out', () => {
    assert.deepEqual(normaliseMediaUrl('HTTP://WAHA.:80/api/files/x?a=1#b'), {
      key: 'http://waha:80/api/files/x',
    });
    assert.deepEqual(normaliseMediaUrl('https://[::1]/f'), { key: 'https://[::1]:443/f' });
    assert.deepEqual(normaliseMediaUrl('http://0x7f.1/f'), { key: 'http://127.0.0.1:80/f' });
    assert.deepEqual(normalisePrefix('http://waha:3000/api/files/?x=1'), {
      why: 'must not have a query or fragment',
    });
  });
});

describe('the prefixes that count for an instance', () => {
  test('its own narrows the operator’s; one the operator no longer covers counts as none', () => {
    assert.deepEqual(effectivePrefixes([PREFIX, 'http://other/f/'], null), [
      'http://waha:3000/api/files/',
      'http://other:80/f/',
    ]);
    assert.deepEqual(effectivePrefixes([PREFIX], 'http://WAHA:3000/api/files/tenant-a'), [
      'http://waha:3000/api/files/tenant-a/',
    ]);
    assert.deepEqual(effectivePrefixes([PREFIX], 'http://waha:3000/api/'), []);
    assert.deepEqual(effectivePrefixes([], null), []);
  });

  test('what an instance may be given: within the operator’s prefixes, said in words otherwise', () => {
    assert.equal(instancePrefixProblem('http://waha:3000/api/files/tenant-a/', [PREFIX]), null);
    assert.equal(instancePrefixProblem('http://waha:3000/api/files', [PREFIX]), null, 'the same folder');
    assert.equal(
      instancePrefixProblem('http://waha:3000/api/filesX/', [PREFIX]),
      `must be within ENGINE_MEDIA_PREFIXES: one of ${PREFIX} or a URL under it`,
    );
    assert.equal(
      instancePrefixProblem('http://waha:3000/api/files/../', [PREFIX]),
      'must be a URL prefix such as http://waha:3000/api/files/default/; it must not have a "." or ".." segment in its path',
    );
    assert.equal(
      instancePrefixProblem('http://waha:3000/api/files/a/', []),
      'cannot be set while ENGINE_MEDIA_PREFIXES is unset: the operator allows no engine media prefix',
    );
  });
});

describe('how a media URL may be downloaded', () => {
  test('under a prefix: headers only for an engine endpoint’s event; elsewhere public; bad spellings refused', () => {
    assert.deepEqual(mediaSource('http://waha:3000/api/files/x', keys, true), {
      kind: 'prefixed',
      headers: true,
    });
    assert.deepEqual(mediaSource('http://waha:3000/api/files/x', keys, false), {
      kind: 'prefixed',
      headers: false,
    });
    assert.deepEqual(mediaSource('https://cdn.example/x.jpg', keys, true), { kind: 'public' });
    assert.deepEqual(mediaSource('http://waha:3000/api/sessions', keys, true), { kind: 'public' });
    assert.equal(mediaSource('http://waha:3000/api/files/%2e%2e/s', keys, true).kind, 'refused');
  });
});
