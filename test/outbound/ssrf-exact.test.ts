import { describe, expect, it } from 'vitest'
import { bareHost, checkUrlStatically, MAX_DESTINATION_URL_LENGTH } from '@lsv/shared/domain/webhooks/ssrf.ts'
import { classifyAddress, isAllowedAddress, parseIPv6 } from '@lsv/shared/lib/ip-ranges.ts'
import { filteringLookup } from '@lsv/shared/adapters/outbound-http/safe-agent.ts'

/**
 * The SSRF policy's exact answers: the class AND the label of every range (the label is the reason
 * an operator reads), both edges of each IPv4 range, the IPv6 parser's groups, and the exact
 * result objects of the static check. The corpus test (ssrf.test.ts) checks refuse/accept only;
 * these were written against the mutants StrykerJS found surviving (npm run test:mutation -- ssrf).
 */

describe('IPv4 ranges: label, first and last address blocked, neighbours public', () => {
  // [label, first address of the range, last address, the address just below, just above]
  const RANGES: Array<[string, string, string, string | null, string | null]> = [
    ['this network', '0.0.0.0', '0.255.255.255', null, '1.0.0.0'],
    ['private', '10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
    ['carrier-grade NAT', '100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
    ['link-local', '169.254.0.0', '169.254.255.255', '169.253.255.255', '169.255.0.0'],
    ['private', '172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
    ['IETF protocol assignments', '192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
    ['documentation', '192.0.2.0', '192.0.2.255', '192.0.1.255', '192.0.3.0'],
    ['AS112', '192.31.196.0', '192.31.196.255', '192.31.195.255', '192.31.197.0'],
    ['AMT', '192.52.193.0', '192.52.193.255', '192.52.192.255', '192.52.194.0'],
    ['6to4 relay anycast', '192.88.99.0', '192.88.99.255', '192.88.98.255', '192.88.100.0'],
    ['private', '192.168.0.0', '192.168.255.255', '192.167.255.255', '192.169.0.0'],
    ['AS112', '192.175.48.0', '192.175.48.255', '192.175.47.255', '192.175.49.0'],
    ['benchmarking', '198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
    ['documentation', '198.51.100.0', '198.51.100.255', '198.51.99.255', '198.51.101.0'],
    ['documentation', '203.0.113.0', '203.0.113.255', '203.0.112.255', '203.0.114.0'],
    ['multicast', '224.0.0.0', '239.255.255.255', '223.255.255.255', null],
    ['reserved', '240.0.0.0', '255.255.255.254', null, null],
  ]
  it.each(RANGES)('%s: %s .. %s', (label, first, last, below, above) => {
    expect(classifyAddress(first)).toEqual({ cls: 'blocked', label })
    expect(classifyAddress(last)).toEqual({ cls: 'blocked', label })
    if (below) expect(classifyAddress(below), below).toEqual({ cls: 'public', label: 'public' })
    if (above) expect(classifyAddress(above), above).toEqual({ cls: 'public', label: 'public' })
  })

  it('loopback, broadcast, public', () => {
    expect(classifyAddress('127.0.0.1')).toEqual({ cls: 'loopback', label: 'loopback' })
    expect(classifyAddress('127.255.255.255')).toEqual({ cls: 'loopback', label: 'loopback' })
    expect(classifyAddress('255.255.255.255')).toEqual({ cls: 'blocked', label: 'broadcast' })
    expect(classifyAddress('8.8.8.8')).toEqual({ cls: 'public', label: 'public' })
    expect(classifyAddress('126.255.255.255')).toEqual({ cls: 'public', label: 'public' })
    expect(classifyAddress('128.0.0.0')).toEqual({ cls: 'public', label: 'public' })
  })
})

describe('IPv6 ranges', () => {
  const BLOCKED: Array<[string, string]> = [
    ['::', 'IPv4-compatible / unspecified'],
    ['::a00:1', 'IPv4-compatible / unspecified'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::ffff:0:808:808', 'IPv4-translated'],
    ['64:ff9b::808:808', 'NAT64'],
    ['64:ff9b:1::1', 'local NAT64'],
    ['100::1', 'discard'],
    ['2001::1', 'IETF protocol assignments'],
    ['2001:1ff:ffff::1', 'IETF protocol assignments'],
    ['2001:db8::1', 'documentation'],
    ['2002::1', '6to4'],
    ['3fff::1', 'documentation'],
    ['5f00::1', 'SRv6 SIDs'],
    ['fc00::1', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    // outside global unicast 2000::/3 and in no listed block: not routable on the internet
    ['4000::1', 'not global unicast'],
    ['1::1', 'not global unicast'],
    ['e000::1', 'not global unicast'],
    ['::2', 'IPv4-compatible / unspecified'],
  ]
  it.each(BLOCKED)('%s is blocked: %s', (address, label) => {
    expect(classifyAddress(address)).toEqual({ cls: 'blocked', label })
  })

  it('loopback in every spelling, public global unicast, zones', () => {
    for (const a of ['::1', '0:0:0:0:0:0:0:1', '0000::0001']) expect(classifyAddress(a), a).toEqual({ cls: 'loopback', label: 'loopback' })
    for (const a of ['2606:4700:4700::1111', '2001:200::1', '3ffe::1', '2a00:1450:4001::1'])
      expect(classifyAddress(a), a).toEqual({ cls: 'public', label: 'public' })
    // a zone id is cut off before parsing, whatever it contains
    expect(classifyAddress('fe80::1%eth0')).toEqual({ cls: 'blocked', label: 'link-local' })
    expect(classifyAddress('fe80::1%eth0.5')).toEqual({ cls: 'blocked', label: 'link-local' })
  })

  it('anything that is not an IP address', () => {
    for (const a of ['', 'localhost', 'example.com', '1.2.3', '::g', '[::1]'])
      expect(classifyAddress(a), a).toEqual({ cls: 'blocked', label: 'not an IP address' })
  })

  it('isAllowedAddress: public always, loopback only when allowed, blocked never', () => {
    expect(isAllowedAddress('8.8.8.8', false)).toBe(true)
    expect(isAllowedAddress('::1', false)).toBe(false)
    expect(isAllowedAddress('::1', true)).toBe(true)
    expect(isAllowedAddress('127.0.0.1', true)).toBe(true)
    expect(isAllowedAddress('10.0.0.1', true)).toBe(false)
    expect(isAllowedAddress('fd00::1', true)).toBe(false)
  })
})

describe('parseIPv6', () => {
  it('gives the 8 groups of every textual form', () => {
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1])
    expect(parseIPv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
    expect(parseIPv6('2001:db8::8:800:200c:417a')).toEqual([0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a])
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(parseIPv6('FFFF:0:0:0:0:0:0:ABCD')).toEqual([0xffff, 0, 0, 0, 0, 0, 0, 0xabcd])
    // a dotted IPv4 tail becomes the last two groups
    expect(parseIPv6('::ffff:10.0.0.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001])
    expect(parseIPv6('64:ff9b::169.254.169.254')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xa9fe, 0xa9fe])
    expect(parseIPv6('1:2:3:4:5:6:192.168.1.255')).toEqual([1, 2, 3, 4, 5, 6, 0xc0a8, 0x01ff])
    // the zone is not part of the address
    expect(parseIPv6('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1])
    expect(parseIPv6('fe80::1%25')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1])
  })

  it('null for anything that is not IPv6', () => {
    for (const t of ['', '1.2.3.4', 'example.com', '::1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', '::g', '%eth0', '1:2:3:4:5:6:7']) {
      expect(parseIPv6(t), t).toBeNull()
    }
  })
})

describe('checkUrlStatically: the exact answers', () => {
  it('length, scheme, credentials', () => {
    expect(checkUrlStatically('', false)).toEqual({ ok: false, reason: 'URL length out of range' })
    expect(checkUrlStatically(123 as unknown as string, false)).toEqual({ ok: false, reason: 'URL length out of range' })
    const base = 'https://hooks.example.com/'
    const atMax = base + 'a'.repeat(MAX_DESTINATION_URL_LENGTH - base.length)
    expect(MAX_DESTINATION_URL_LENGTH).toBe(2048)
    expect(checkUrlStatically(atMax, false)).toEqual({ ok: true, host: 'hooks.example.com', literal: false })
    expect(checkUrlStatically(`${atMax}a`, false)).toEqual({ ok: false, reason: 'URL length out of range' })
    expect(checkUrlStatically('hooks.example.com/x', false)).toEqual({ ok: false, reason: 'not an absolute URL' })
    expect(checkUrlStatically('ftp://hooks.example.com/', false)).toEqual({ ok: false, reason: 'scheme must be https or http' })
    expect(checkUrlStatically('https://user@hooks.example.com/', false)).toEqual({ ok: false, reason: 'credentials in URL are not allowed' })
    expect(checkUrlStatically('https://:secret@hooks.example.com/', false)).toEqual({ ok: false, reason: 'credentials in URL are not allowed' })
  })

  it('IP literals: ok with the bare host, or refused with the range label', () => {
    expect(checkUrlStatically('https://8.8.8.8/', false)).toEqual({ ok: true, host: '8.8.8.8', literal: true })
    expect(checkUrlStatically('https://[2606:4700:4700::1111]/', false)).toEqual({ ok: true, host: '2606:4700:4700::1111', literal: true })
    expect(checkUrlStatically('http://10.0.0.1/', false)).toEqual({ ok: false, reason: 'address not allowed (private)' })
    expect(checkUrlStatically('http://[fe80::1]/', false)).toEqual({ ok: false, reason: 'address not allowed (link-local)' })
    expect(checkUrlStatically('http://127.0.0.1/', false)).toEqual({ ok: false, reason: 'address not allowed (loopback)' })
    expect(checkUrlStatically('http://127.0.0.1:9/', true)).toEqual({ ok: true, host: '127.0.0.1', literal: true })
    expect(checkUrlStatically('http://[::1]:9/', true)).toEqual({ ok: true, host: '::1', literal: true })
    expect(checkUrlStatically('http://10.0.0.1/', true)).toEqual({ ok: false, reason: 'address not allowed (private)' })
  })

  it('names: localhost (with or without a trailing dot, any case, any subdomain), non-public names, public ones', () => {
    for (const u of ['http://localhost/', 'http://LOCALHOST./', 'http://api.localhost/', 'http://a.b.localhost./']) {
      expect(checkUrlStatically(u, false), u).toEqual({ ok: false, reason: 'address not allowed (loopback)' })
    }
    expect(checkUrlStatically('http://localhost:9/', true)).toEqual({ ok: true, host: 'localhost', literal: false })
    expect(checkUrlStatically('http://localhost.:9/', true)).toEqual({ ok: true, host: 'localhost', literal: false })
    expect(checkUrlStatically('http://Api.Localhost:9/', true)).toEqual({ ok: true, host: 'api.localhost', literal: false })
    // a name merely containing "localhost" is an ordinary name
    expect(checkUrlStatically('https://localhost.example.com/', false)).toEqual({ ok: true, host: 'localhost.example.com', literal: false })
    expect(checkUrlStatically('https://mylocalhost/', false)).toEqual({ ok: false, reason: 'host is not a public name' })
    for (const u of ['http://intranet/', 'http://db.internal/', 'http://printer.local/', 'http://x.local./']) {
      expect(checkUrlStatically(u, false), u).toEqual({ ok: false, reason: 'host is not a public name' })
    }
    expect(checkUrlStatically('https://Hooks.Example.COM./path', false)).toEqual({ ok: true, host: 'hooks.example.com', literal: false })
  })

  it('bareHost strips one pair of brackets only when both are there', () => {
    expect(bareHost('[::1]')).toBe('::1')
    expect(bareHost('[::1')).toBe('[::1')
    expect(bareHost('::1]')).toBe('::1]')
    expect(bareHost('example.com')).toBe('example.com')
  })
})

describe('filteringLookup: errors', () => {
  it('a failed lookup is passed on as it is', async () => {
    const failing = ((_h: string, _o: unknown, cb: (e: NodeJS.ErrnoException) => void) =>
      cb(Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }))) as never
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => filteringLookup(false, failing)('x', { all: true }, (e) => resolve(e)))
    expect(err?.code).toBe('ENOTFOUND')
  })

  it('an empty answer is refused as "no address"', async () => {
    const empty = ((_h: string, _o: unknown, cb: (e: null, r: unknown[]) => void) => cb(null, [])) as never
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => filteringLookup(false, empty)('x', { all: true }, (e) => resolve(e)))
    expect(err).toMatchObject({ code: 'ERR_DESTINATION_NOT_ALLOWED', message: 'destination address not allowed (no address)' })
  })

  it("the refusal names the first answer's range", async () => {
    const rows = ((_h: string, _o: unknown, cb: (e: null, r: unknown[]) => void) =>
      cb(null, [
        { address: '169.254.169.254', family: 4 },
        { address: 'fd00::1', family: 6 },
      ])) as never
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) => filteringLookup(false, rows)('x', { all: true }, (e) => resolve(e)))
    expect(err?.message).toBe('destination address not allowed (link-local)')
  })
})
