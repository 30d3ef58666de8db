import { describe, expect, it } from 'vitest'
import { checkDestination, isAuthorizedHost, normalizeAuthorizedDomain, parseDestinationUrl } from '@lsv/shared/domain/links/destination.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'

/** As an account might hold them: mixed case and a Unicode (IDN) domain on purpose. */
const AUTHORIZED = ['example.com', 'Shop.Acme.IO', 'bücher.example']

function outcome(raw: string): 'ok' | 'invalid destination URL' | 'destination host is not authorized' | string {
  try {
    checkDestination(raw, AUTHORIZED)
    return 'ok'
  } catch (err) {
    if (isAppError(err)) return err.message
    throw err
  }
}

const HANDCRAFTED_HOSTILE = [
  // suffix and prefix tricks
  'https://evil-example.com/',
  'https://notexample.com/',
  'https://example.com.evil.com/',
  'https://example.com-evil.com/',
  'https://example.co/',
  'https://example.comm/',
  'https://xexample.com/',
  'https://example.com.evil.com./',
  'https://acme.io/',
  'https://www.acme.io/',
  'https://evilshop.acme.io/',
  'https://shop.acme.io.evil.com/',
  'https://shop-acme.io/',
  'https://example.com.',
  'https://bucher.example/',
  'https://xn--bcher-kva.example.evil.com/',
  // userinfo
  'https://example.com@evil.com/',
  'https://example.com:443@evil.com/',
  'https://user:pass@example.com/',
  'https://@example.com/',
  'https://example.com:@evil.com/',
  'https://:@example.com/',
  'https://example.com%40evil.com/',
  'http://www.example.com@evil.com/x',
  // backslashes
  'https:\\\\evil.com',
  'https://evil.com\\example.com',
  'https:/\\evil.com',
  'https://example.com\\.evil.com/',
  'https://evil.com\\@example.com',
  'https://example.com\\@evil.com',
  'https:\\\\example.com',
  // trailing dots
  'https://example.com./',
  'https://www.example.com./',
  'https://example.com../',
  'https://shop.acme.io./',
  // mixed case around a hostile host
  'HTTPS://EVIL-EXAMPLE.COM/',
  'https://Example.Com.Evil.Com/',
  'HtTpS://ExAmPlE.cOm.EvIl.CoM',
  // IDN and punycode look-alikes
  'https://еxample.com/',
  'https://exаmple.com/',
  'https://xn--xample-2of.com/',
  'https://examp1e.com/',
  'https://exämple.com/',
  'https://example.cοm/',
  'https://xn--exmple-cua.com/',
  'https://ехаmрlе.com/',
  'https://shop.acme.іo/',
  'https://bücher.examp1e/',
  // IP literals (every IPv4 spelling WHATWG accepts, IPv6)
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://0x7f.1/',
  'http://127.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://10.0.0.1/',
  'http://169.254.169.254/latest/meta-data',
  'https://93.184.216.34/',
  'https://[2606:2800:220:1::]/',
  // schemes other than http(s), and not-absolute inputs
  'javascript:alert(1)//example.com',
  'data:text/html,<script>alert(1)</script>',
  'ftp://example.com/',
  'file://example.com/etc/passwd',
  'ws://example.com/',
  'wss://example.com/',
  'mailto:someone@example.com',
  '//example.com/',
  'example.com',
  '/path/only',
  'gopher://example.com/',
  'blob:https://example.com/uuid',
  'view-source:https://example.com/',
  'httpx://example.com/',
  'https:example.com',
  'https:/example.com',
  'https:///example.com',
  'JAVASCRIPT:alert(1)',
  // whitespace and control characters
  ' https://example.com/',
  'https://example.com/ ',
  'https://exa mple.com/',
  'https://example.com\t',
  '\u0000https://example.com/',
  'https://evil.com\u2028.example.com/',
  'https://example.com\n.evil.com/',
  'https://example.com\r\n',
  'https://evil.com\u00a0.example.com',
  // percent-escapes in the host
  'https://ex%61mple.com/',
  'https://example.com%2eevil.com/',
  'https://evil.com%2f.example.com/',
  'https://evil.com%23.example.com/',
  'https://example.com%00.evil.com/',
  // delimiters that move the host
  'https://evil.com#.example.com',
  'https://evil.com?x=example.com',
  'https://evil.com/example.com',
  'https://evil.com#@example.com',
  'https://evil.com/?@example.com',
  'https://evil.com;.example.com/',
  'https://evil.com&.example.com/',
  'https://evil.com!.example.com/',
  'https://evil.com,.example.com/',
  "https://evil.com'.example.com/",
  // empty and odd
  'https://',
  'http://:80/',
  'https://example.com:99999/',
  'https://example.com:80:80/',
]

const EVIL_HOSTS = ['evil.com', 'attacker.net', 'example.com.evil.com', 'evil-example.com']
const TEMPLATES = [
  (h: string) => `https://${h}`,
  (h: string) => `http://${h}/`,
  (h: string) => `https://${h}:8443/path`,
  (h: string) => `https://${h}/?next=https://example.com`,
  (h: string) => `https://example.com@${h}`,
  (h: string) => `https://${h}#example.com`,
  (h: string) => `HTTPS://${h.toUpperCase()}/`,
  (h: string) => `https://${h}./`,
]
const HOSTILE = [...HANDCRAFTED_HOSTILE, ...EVIL_HOSTS.flatMap((h) => TEMPLATES.map((t) => t(h)))]

const VALID = [
  'https://example.com',
  'https://example.com/',
  'http://example.com',
  'https://www.example.com/landing',
  'HTTPS://EXAMPLE.COM/Path',
  'https://Sub.Example.Com:8443/x?y=1#z',
  'https://a.b.c.example.com/',
  'https://example.com/?lsv=old',
  'https://example.com/p?a=b%20c&flag#frag',
  'https://shop.acme.io/cart',
  'https://eu.shop.acme.io/',
  'https://xn--bcher-kva.example/',
  'https://bücher.example/katalog',
  'https://shop.acme.io/path/with%20space',
  'https://example.com/#/spa/route?x=1',
  'https://example.com:443/',
  'http://example.com:80/',
  'https://ex-ample.example.com/',
  'https://123.example.com/',
  'https://example.com/a/b/c.html?utm_source=x&utm_medium=y',
  'https://WWW.Shop.Acme.IO/',
  'https://example.com/path@with-at',
  'https://example.com/?redirect=https://evil.com',
  'https://example.com/#@evil.com',
  'https://s_1.example.com/',
  'https://example.com/ümlaut?q=ä',
]

describe('destination URL corpus', () => {
  it('has at least 100 hostile URLs and none is accepted', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(100)
    const accepted = HOSTILE.filter((raw) => outcome(raw) === 'ok')
    expect(accepted).toEqual([])
  })

  it('rejects hostile URLs only with the two contract texts, `invalid destination URL` only when the value does not parse', () => {
    for (const raw of HOSTILE) {
      const expected = URL.canParse(raw) ? 'destination host is not authorized' : 'invalid destination URL'
      expect(outcome(raw), raw).toBe(expected)
    }
  })

  it('accepts every valid URL', () => {
    const rejected = VALID.filter((raw) => outcome(raw) !== 'ok').map((raw) => [raw, outcome(raw)])
    expect(rejected).toEqual([])
  })
})

describe('which failure is which (docs/links.md)', () => {
  it.each([
    // does not parse as a URL (WHATWG, no base): the only cases of `invalid destination URL`
    ['not a URL', 'invalid destination URL'],
    ['example.com', 'invalid destination URL'],
    ['//example.com/', 'invalid destination URL'],
    ['/path/only', 'invalid destination URL'],
    ['https://', 'invalid destination URL'],
    ['https://example.com:99999/', 'invalid destination URL'],
    ['https://exa mple.com/', 'invalid destination URL'],
    // parses, but its host is not an authorized one as every client reads it
    ['https://example.com@evil.com/', 'destination host is not authorized'],
    ['https://example.com:443@evil.com/', 'destination host is not authorized'],
    ['https://user:pass@example.com/', 'destination host is not authorized'],
    ['https://@example.com/', 'destination host is not authorized'],
    ['ftp://example.com/', 'destination host is not authorized'],
    ['javascript:alert(1)//example.com', 'destination host is not authorized'],
    ['https://example.com\\@evil.com', 'destination host is not authorized'],
    ['https://ex%61mple.com/', 'destination host is not authorized'],
    ['https:example.com', 'destination host is not authorized'],
    [' https://example.com/', 'destination host is not authorized'],
    ['https://evil.com;.example.com/', 'destination host is not authorized'],
    ['https://evil-example.com/', 'destination host is not authorized'],
    ['https://example.com.evil.com/', 'destination host is not authorized'],
    ['https://example.com./', 'destination host is not authorized'],
    ['http://127.0.0.1/', 'destination host is not authorized'],
    ['http://[::1]/', 'destination host is not authorized'],
    ['https://еxample.com/', 'destination host is not authorized'],
  ])('%s -> %s', (raw, expected) => {
    expect(outcome(raw)).toBe(expected)
  })

  it('parses mixed case into the lower-case host', () => {
    expect(parseDestinationUrl('HTTPS://WWW.EXAMPLE.COM/A?b=1#c').hostname).toBe('www.example.com')
  })
})

describe('authorized domains', () => {
  it('normalizes entries (case, trailing dot, wildcard prefix, IDN) and drops unusable ones', () => {
    expect(normalizeAuthorizedDomain('Example.COM.')).toBe('example.com')
    expect(normalizeAuthorizedDomain('*.example.com')).toBe('example.com')
    expect(normalizeAuthorizedDomain('bücher.example')).toBe('xn--bcher-kva.example')
    for (const bad of ['', 'com', 'localhost', '127.0.0.1', '[::1]', 'example.com/path', 'user@example.com', 'example.com:443', 'ex%61mple.com']) {
      expect(normalizeAuthorizedDomain(bad)).toBeNull()
    }
  })

  it('a single-label entry authorizes nothing (it would authorize every host under it)', () => {
    expect(isAuthorizedHost('evil.com', ['com'])).toBe(false)
  })

  it('a public suffix (Public Suffix List, private section included) authorizes nothing', () => {
    for (const suffix of ['co.uk', 'com.au', 'github.io', 'appspot.com', 'CO.UK.', '*.co.uk']) {
      expect(normalizeAuthorizedDomain(suffix), suffix).toBeNull()
    }
    expect(isAuthorizedHost('www.bbc.co.uk', ['co.uk'])).toBe(false)
    expect(isAuthorizedHost('co.uk', ['co.uk'])).toBe(false)
    expect(isAuthorizedHost('victim.github.io', ['github.io'])).toBe(false)
    expect(outcome('https://anyone.co.uk/')).toBe('destination host is not authorized')
    // a registrable name under a suffix is an ordinary domain
    expect(normalizeAuthorizedDomain('acme.co.uk')).toBe('acme.co.uk')
    expect(isAuthorizedHost('www.acme.co.uk', ['co.uk', 'acme.co.uk'])).toBe(true)
    expect(isAuthorizedHost('acme.github.io', ['acme.github.io'])).toBe(true)
  })

  it('no authorized domains: nothing is authorized', () => {
    expect(isAuthorizedHost('example.com', [])).toBe(false)
  })
})
