import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressAllowList, parseCidrList } from '../../src/net/address-allow-list.ts';
import {
  checkDestination,
  checkDestinationSyntax,
  createGuardedLookup,
  type DestinationPolicy,
  DestinationRefused,
  guardedAddresses,
  guardedLookup,
  HostUnresolved,
  isPublicAddress,
  type Lookup,
} from '../../src/net/destination.ts';

// Fake DNS: never touches the network. Unknown names fail like getaddrinfo does.
const zone: Record<string, string[]> = {
  'example.test': ['10.0.0.5'],
  'mixed.example.test': ['93.184.215.14', '127.0.0.1'],
  'v6.example.test': ['fd00::1'],
  'mapped.example.test': ['::ffff:10.0.0.1'],
  'metadata.example.test': ['169.254.169.254'],
  'public.example.test': ['93.184.215.14', '2606:4700::1111'],
  'xn--mnchen-3ya.example.test': ['93.184.215.14'],
};
function fakeDns(): { lookup: Lookup; asked: string[] } {
  const asked: string[] = [];
  const lookup: Lookup = async (hostname) => {
    asked.push(hostname);
    const found = zone[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { lookup, asked };
}
const strict = (): DestinationPolicy => ({ allowPrivate: false, lookup: fakeDns().lookup });

describe('checkDestination refuses hostile destinations', () => {
  const hostile = [
    'http://127.0.0.1/',
    'http://2130706433/',
    'http://0x7f000001/',
    'http://0x7f.0.0.1/',
    'http://0177.0.0.1/',
    'https://0x7f.1:443/',
    'http://127.1/',
    'http://10.1/',
    'http://127.0.0.1./',
    'http://127\u30020\u30020\u30021/',
    'http://127\uff0e0\uff0e0\uff0e1/',
    'http://127\uff610\uff610\uff611/',
    'http://localhost/',
    'http://localhost./',
    'HTTP://LOCALHOST:8080/hook',
    'http://api.localhost/',
    'http://a.b.LocalHost./',
    'http://localhost\u3002/',
    'http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/',
    'http://%6c%6f%63alhost/',
    'http://0/',
    'http://0.0.0.0/',
    'http://10.0.0.1/',
    'http://100.64.0.1/',
    'http://100.127.255.254/',
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.169.254./',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.0.0.8/',
    'http://192.168.1.1/',
    'http://198.18.0.1/',
    'http://198.19.255.255/',
    'http://224.0.0.1/',
    'http://240.0.0.1/',
    'http://255.255.255.255/',
    'http://[::]/',
    'http://[::1]/',
    'http://[0:0:0:0:0:0:0:1]:8080/',
    'http://[::127.0.0.1]/',
    'http://[fc00::1]/',
    'http://[FD12:3456::1]/',
    'http://[fe80::1]/',
    'http://[febf::1]/',
    'http://[ff02::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::FFFF:169.254.169.254]/',
    'http://[64:ff9b::a00:1]/',
    'http://[64:ff9b::127.0.0.1]/',
    'http://example.test/',
    'http://mixed.example.test/',
    'http://v6.example.test/',
    'http://mapped.example.test/',
    'http://METADATA.example.test./',
  ];
  assert.ok(hostile.length >= 30);
  for (const url of hostile) {
    it(url, async () => {
      const got = await checkDestination(url, strict());
      assert.equal(got?.code, 'destination_not_allowed', `${url} was allowed`);
      assert.equal(got.field, 'destination_url');
      assert.match(got.message, /^destination_url: /);
    });
  }

  it('names the rule in its messages', async () => {
    const message = async (url: string) => (await checkDestination(url, strict()))?.message;
    const allow =
      'to send to it, set ALLOW_PRIVATE_DESTINATIONS=true (development) or add it to ALLOWED_DESTINATION_CIDRS';
    assert.equal(
      await message('http://127.0.0.1/'),
      `destination_url: 127.0.0.1 is not a globally reachable address (loopback, 127.0.0.0/8); ${allow}`,
    );
    assert.equal(
      await message('http://2130706433/'),
      `destination_url: 127.0.0.1 is not a globally reachable address (loopback, 127.0.0.0/8); ${allow}`,
    );
    assert.equal(
      await message('http://[::ffff:169.254.169.254]/'),
      'destination_url: ::ffff:a9fe:a9fe is not a globally reachable address ' +
        `(link-local, where cloud metadata services live, 169.254.0.0/16); ${allow}`,
    );
    assert.equal(
      await message('http://[fd00::1]/'),
      `destination_url: fd00::1 is not a globally reachable address (unique local (private), fc00::/7); ${allow}`,
    );
    assert.equal(
      await message('http://localhost./'),
      "destination_url: localhost is never allowed (it names Herald's own machine); use its address, e.g. " +
        '127.0.0.1, with ALLOW_PRIVATE_DESTINATIONS=true or ALLOWED_DESTINATION_CIDRS',
    );
    assert.equal(
      await message('https://example.test/hook'),
      'destination_url: example.test resolves to 10.0.0.5, which is not a globally reachable address ' +
        `(private, 10.0.0.0/8); ${allow}`,
    );
  });

  it('judges IP literals without asking DNS', async () => {
    const dns = fakeDns();
    await checkDestination('http://[::ffff:7f00:1]/', { allowPrivate: false, lookup: dns.lookup });
    await checkDestination('http://0x7f.1/', { allowPrivate: false, lookup: dns.lookup });
    await checkDestination('https://93.184.215.14/', { allowPrivate: false, lookup: dns.lookup });
    assert.deepEqual(dns.asked, []);
  });
});

describe('checkDestination allows public destinations', () => {
  const allowed = [
    'https://93.184.215.14/',
    'https://8.8.8.8:8443/hook?x=1#frag',
    'https://[2606:4700::1111]/',
    'https://[::ffff:93.184.215.14]/',
    'https://[64:ff9b::5db8:d70e]/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://198.20.0.1/',
    'http://192.0.1.1/',
    'https://public.example.test/hooks',
    'HTTPS://PUBLIC.EXAMPLE.TEST./hooks',
    'https://münchen.example.test/',
    'https://notlocalhost.example.test/',
  ];
  for (const url of allowed) {
    it(url, async () => {
      const policy = { allowPrivate: false, lookup: async (host: string) => zone[host] ?? ['93.184.215.14'] };
      assert.equal(await checkDestination(url, policy), null);
    });
  }

  it('accepts a name that cannot be resolved yet', async () => {
    const dns = fakeDns();
    const got = await checkDestination('https://nowhere.example.test/', {
      allowPrivate: false,
      lookup: dns.lookup,
    });
    assert.equal(got, null);
    assert.deepEqual(dns.asked, ['nowhere.example.test']);
  });
});

describe('allowPrivate', () => {
  for (const url of ['http://10.0.0.5:8080/', 'http://[::1]/', 'http://0x7f.1/', 'http://example.test/']) {
    it(`lets ${url} pass without resolving`, async () => {
      const dns = fakeDns();
      assert.equal(await checkDestination(url, { allowPrivate: true, lookup: dns.lookup }), null);
      assert.deepEqual(dns.asked, []);
    });
  }
  for (const url of ['http://localhost:3000/', 'http://svc.localhost./']) {
    it(`still refuses ${url}`, async () => {
      const got = await checkDestination(url, { allowPrivate: true, lookup: fakeDns().lookup });
      assert.equal(got?.code, 'destination_not_allowed');
    });
  }
});

describe('syntax failures are invalid_request', () => {
  const cases: [unknown, RegExp][] = [
    ['ftp://example.com/', /absolute http or https URL/],
    ['http:///x', /absolute http or https URL/],
    ['javascript:alert(1)', /absolute http or https URL/],
    ['/relative/path', /absolute http or https URL/],
    ['example.com/hook', /absolute http or https URL/],
    ['http:example.com', /absolute http or https URL/],
    ['http:\\\\example.com\\', /absolute http or https URL/],
    ['http://', /absolute http or https URL/],
    ['', /absolute http or https URL/],
    ['http://[fe80::1%25eth0]/', /absolute http or https URL/], // WHATWG URLs have no zone ids
    ['https://user@example.com/', /must not contain user information/],
    ['https://user:pw@example.com/', /must not contain user information/],
    ['https://@example.com/', /must not contain user information/],
    ['https://:@example.com/', /must not contain user information/],
    [`https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`, /at most 2048 characters/],
    [42, /must be a string/],
    [null, /must be a string/],
    [undefined, /must be a string/],
    [{ href: 'https://example.com/' }, /must be a string/],
  ];
  for (const [raw, message] of cases) {
    it(`${typeof raw === 'string' ? JSON.stringify(raw.slice(0, 40)) : String(raw)}`, async () => {
      const syntax = checkDestinationSyntax(raw);
      assert.equal(syntax?.code, 'invalid_request');
      assert.equal(syntax.field, 'destination_url');
      assert.match(syntax.message, message);
      const full = await checkDestination(raw, strict());
      // Another scheme, to the full check, is one it does not know, among those it takes (brokers' too).
      if (typeof raw === 'string' && /^(ftp|javascript):/.test(raw)) {
        assert.equal(full?.code, 'invalid_request');
        assert.match(String(full?.message), /unknown scheme "(ftp|javascript):"; use http, https, amqp/);
      } else assert.deepEqual(full, syntax);
    });
  }

  it('accepts exactly 2048 characters and userinfo-like text after the host', () => {
    assert.equal(checkDestinationSyntax(`https://example.com/${'a'.repeat(2048 - 20)}`), null);
    assert.equal(checkDestinationSyntax('https://example.com/path@x?to=a@b#c@d'), null);
  });
});

describe('isPublicAddress', () => {
  const table: [string, boolean][] = [
    ['1.1.1.1', true],
    ['93.184.215.14', true],
    ['2606:4700::1111', true],
    ['2606:4700:0:0:0:0:0:1111', true],
    ['::ffff:1.1.1.1', true],
    ['64:ff9b::101:101', true],
    ['2002:101:101::1', true],
    ['2002:7f00:1::', false],
    ['2002:a9fe:a9fe::', false],
    ['64:ff9b:1::101:101', false],
    ['2001:db8::1', false],
    ['2001:0:4136:e378::1', false],
    ['3fff::1', false],
    ['100::1', false],
    ['192.0.2.1', false],
    ['198.51.100.7', false],
    ['203.0.113.9', false],
    ['2001:4860:4860::8888', true],
    ['127.0.0.1', false],
    ['255.255.255.255', false],
    ['::', false],
    ['::1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['FE80::1', false],
    ['fe80::1%eth0', false],
    ['ff05::2', false],
    ['not-an-ip', false],
    ['127.1', false],
    ['[::1]', false],
  ];
  for (const [ip, expected] of table) {
    it(`${ip} → ${expected}`, () => assert.equal(isPublicAddress(ip), expected));
  }
});

describe('guardedLookup', () => {
  type Result = { err: (Error & { code?: string }) | null; args: unknown[] };
  const call = (hostname: string, options: object) =>
    new Promise<Result>((resolve) => {
      let sync = true;
      guardedLookup(hostname, options, (err, ...args) => {
        assert.equal(sync, false, 'callback must not run synchronously');
        resolve({ err, args });
      });
      sync = false;
    });

  for (const hostname of [
    'localhost',
    'LOCALHOST.',
    'api.localhost',
    'localhost\u3002',
    '127\uff0e0\uff0e0\uff0e1',
    '0x7f.1',
    '127.0.0.1',
    '10.1',
    '[::1]',
    '::ffff:a00:1',
  ]) {
    for (const options of [{}, { all: true }]) {
      it(`refuses ${hostname} ${JSON.stringify(options)}`, async () => {
        const { err } = await call(hostname, options);
        assert.ok(err instanceof Error);
        assert.equal(err.code, 'destination_not_allowed');
        assert.match(err.message, /^destination_url: /);
      });
    }
  }

  it('resolves a public IPv4 literal in the single form', async () => {
    assert.deepEqual(await call('1.1.1.1', {}), { err: null, args: ['1.1.1.1', 4] });
  });

  it('resolves a public IPv4 literal with all: true', async () => {
    assert.deepEqual(await call('1.1.1.1', { all: true }), {
      err: null,
      args: [[{ address: '1.1.1.1', family: 4 }]],
    });
  });

  it('resolves a public IPv6 literal', async () => {
    assert.deepEqual(await call('2606:4700::1111', { family: 6 }), {
      err: null,
      args: ['2606:4700::1111', 6],
    });
  });
});

describe('the allow-list (ALLOWED_DESTINATION_CIDRS)', () => {
  const allow = new AddressAllowList(parseCidrList('10.1.0.0/16, fd00::/8,192.168.7.7'));
  const policy = (lookup = fakeDns().lookup): DestinationPolicy => ({ allowPrivate: false, allow, lookup });
  const table: [string, boolean][] = [
    ['http://10.1.2.3/', true],
    ['http://10.1.255.255:8080/', true],
    ['http://0x0a010203/', true],
    ['http://[::ffff:10.1.2.3]/', true],
    ['http://[64:ff9b::a01:203]/', true],
    ['http://[fd12::1]/', true],
    ['http://192.168.7.7/', true],
    ['http://93.184.215.14/', true],
    ['http://10.2.0.1/', false],
    ['http://192.168.7.8/', false],
    ['http://[fc00::1]/', false],
    ['http://127.0.0.1/', false],
    ['http://169.254.169.254/', false],
    ['http://localhost/', false],
    ['http://example.test/', false], // resolves to 10.0.0.5
    ['http://v6.example.test/', true], // resolves to fd00::1
  ];
  for (const [url, allowed] of table) {
    it(`${url} → ${allowed ? 'allowed' : 'refused'}`, async () => {
      const got = await checkDestination(url, policy());
      assert.equal(got === null, allowed, JSON.stringify(got));
    });
  }

  it('parses bare addresses as one host and refuses what is not a CIDR', () => {
    assert.deepEqual(parseCidrList(' ::1 , 10.0.0.0/8,'), [
      { address: '::1', prefix: 128, family: 6 },
      { address: '10.0.0.0', prefix: 8, family: 4 },
    ]);
    for (const bad of [
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0/8',
      'example.com/8',
      '10.0.0.0/8/1',
      '10.0.0.0/x',
      '10.0.0.0/',
    ]) {
      assert.throws(() => parseCidrList(bad), /must be comma-separated CIDRs/, bad);
    }
  });
});

describe('createGuardedLookup with an injected resolver', () => {
  const call = (lookup: ReturnType<typeof createGuardedLookup>, host: string, options: object = {}) =>
    new Promise<{ err: (Error & { code?: string }) | null; args: unknown[] }>((resolve) =>
      lookup(host, options, (err, ...args) => resolve({ err, args })),
    );

  it('passes a public answer, in both forms', async () => {
    const lookup = createGuardedLookup({ lookup: fakeDns().lookup });
    assert.deepEqual(await call(lookup, 'public.example.test'), { err: null, args: ['93.184.215.14', 4] });
    assert.deepEqual((await call(lookup, 'public.example.test', { all: true })).args, [
      [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:4700::1111', family: 6 },
      ],
    ]);
  });

  it('refuses a name rebound to a private address after it was saved', async () => {
    let n = 0;
    const rebinding: Lookup = async () => (n++ === 0 ? ['93.184.215.14'] : ['169.254.169.254']);
    assert.equal(
      await checkDestination('http://rebind.test/', { allowPrivate: false, lookup: rebinding }),
      null,
    );
    const { err } = await call(createGuardedLookup({ lookup: rebinding }), 'rebind.test');
    assert.equal(err?.code, 'destination_not_allowed');
    assert.match(err.message, /rebind\.test resolves to 169\.254\.169\.254/);
  });

  it('lets an allow-listed answer through and passes resolver failures on', async () => {
    const allow = new AddressAllowList(parseCidrList('10.0.0.0/24'));
    const lookup = createGuardedLookup({ allow, lookup: fakeDns().lookup });
    assert.deepEqual(await call(lookup, 'example.test'), { err: null, args: ['10.0.0.5', 4] });
    assert.equal((await call(lookup, 'metadata.example.test')).err?.code, 'destination_not_allowed');
    assert.equal((await call(lookup, 'nowhere.example.test')).err?.code, 'ENOTFOUND');
  });
});

describe('at a connection, a name that gives no address is a failed attempt, never an allowed one', () => {
  const call = (lookup: ReturnType<typeof createGuardedLookup>, host: string) =>
    new Promise<{ err: (Error & { code?: string }) | null; args: unknown[] }>((resolve) =>
      lookup(host, { all: true }, (err, ...args) => resolve({ err, args })),
    );
  const failing =
    (err: unknown): Lookup =>
    async () => {
      throw err;
    };

  for (const [what, resolver, code, words] of [
    [
      'a failed lookup',
      failing(Object.assign(new Error('queryA ESERVFAIL gone.test'), { code: 'ESERVFAIL' })),
      'ESERVFAIL',
      'could not resolve gone.test: queryA ESERVFAIL gone.test',
    ],
    [
      'a lookup that timed out without a code',
      failing(new Error('the lookup timed out')),
      'ENOTFOUND',
      'could not resolve gone.test: the lookup timed out',
    ],
    ['an empty answer', async () => [], 'ENOTFOUND', 'could not resolve gone.test: the name has no address'],
    [
      'an answer with no address in it',
      async () => ['not-an-address'],
      'ENOTFOUND',
      'could not resolve gone.test: the name has no address',
    ],
  ] as [string, Lookup, string, string][]) {
    it(`${what}: no address handed to the socket, in words`, async () => {
      for (const allowPrivate of [false, true]) {
        const { err, args } = await call(
          createGuardedLookup({ allowPrivate, lookup: resolver }),
          'gone.test',
        );
        assert.ok(err instanceof HostUnresolved, `allowPrivate ${allowPrivate}: ${err}`);
        assert.deepEqual([err.code, err.message, args], [code, words, []]);
      }
      // Saving such a webhook is still accepted: the name may resolve by the time it is sent to.
      assert.equal(
        await checkDestination('https://gone.test/', { allowPrivate: false, lookup: resolver }),
        null,
      );
    });
  }

  it('guardedAddresses gives the approved addresses, and with allowPrivate still refuses localhost names', async () => {
    const { lookup } = fakeDns();
    assert.deepEqual(await guardedAddresses('example.test', { allowPrivate: true, lookup }), [
      { address: '10.0.0.5', family: 4 },
    ]);
    await assert.rejects(guardedAddresses('example.test', { lookup }), DestinationRefused);
    await assert.rejects(
      guardedAddresses('api.localhost', { allowPrivate: true, lookup }),
      DestinationRefused,
    );
    await assert.rejects(guardedAddresses('nowhere.test', { allowPrivate: true, lookup }), HostUnresolved);
  });
});
