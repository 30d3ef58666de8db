import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { classifyAddress, parseIPv6 } from '@lsv/shared/lib/ip-ranges.ts'

/**
 * ip-ranges.ts parses with ipaddr.js after the WHATWG URL parser has put an IPv6 address in
 * canonical form. These pin the places where the library alone would answer differently, and the
 * blocks the SSRF policy must refuse in every spelling.
 */

const hex = (n: number) => n.toString(16)

describe('parsing through ipaddr.js', () => {
  it('`::a.b.c.d` is IPv4-compatible (RFC 4291), not the IPv4-mapped form ipaddr.js alone makes of it', () => {
    expect(parseIPv6('::127.0.0.1')).toEqual([0, 0, 0, 0, 0, 0, 0x7f00, 1])
    expect(parseIPv6('::0.0.0.0')).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(classifyAddress('::127.0.0.1')).toEqual({ cls: 'blocked', label: 'IPv4-compatible / unspecified' })
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({ cls: 'blocked', label: 'IPv4-mapped' })
  })

  it('IPv4 is dotted quads only, and never carries a zone', () => {
    for (const a of ['127.1', '0x7f.0.0.1', '0177.0.0.1', '2130706433', '1.2.3.4%eth0', '8.8.8.8%1']) {
      expect(classifyAddress(a), a).toEqual({ cls: 'blocked', label: 'not an IP address' })
    }
  })
})

describe('every spelling of a refused block is refused', () => {
  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'))

  it('IPv4 inside IPv6: mapped, compatible, translated, NAT64 (well-known and local), 6to4, Teredo', () => {
    fc.assert(
      fc.property(v4, fc.nat(0xffff), (a, g) => {
        const [p, q] = ((n) => [hex(n >>> 16), hex(n & 0xffff)])(a.split('.').reduce((n, o) => n * 256 + Number(o), 0))
        const forms: Array<[string, string]> = [
          [`::ffff:${a}`, 'IPv4-mapped'],
          [`::ffff:${p}:${q}`, 'IPv4-mapped'],
          [`0:0:0:0:0:ffff:${a}`, 'IPv4-mapped'],
          [`::ffff:0:${a}`, 'IPv4-translated'],
          [`64:ff9b::${a}`, 'NAT64'],
          [`64:ff9b:1:${hex(g)}::${p}:${q}`, 'local NAT64'],
          [`2002:${p}:${q}::${hex(g)}`, '6to4'],
          [`2001:0:${p}:${q}::${hex(g)}`, 'IETF protocol assignments'],
        ]
        for (const [address, label] of forms) expect(classifyAddress(address), address).toEqual({ cls: 'blocked', label })
        // ::a.b.c.d is IPv4-compatible, except ::0.0.0.1 which is the IPv6 loopback itself
        expect(classifyAddress(`::${a}`).cls).toBe(a === '0.0.0.1' ? 'loopback' : 'blocked')
      }),
      { numRuns: 500 },
    )
  })

  it('link-local, unique-local, multicast, documentation, CGNAT and the metadata address, whatever the host bits', () => {
    const cases: Array<[(g: number[]) => string, string]> = [
      [(g) => `fe80::${hex(g[0]!)}:${hex(g[1]!)}`, 'link-local'],
      [(g) => `fe${hex(0x80 + (g[0]! & 0x3f))}:${hex(g[1]!)}::1`, 'link-local'],
      [(g) => `fd${hex(g[0]! & 0xff).padStart(2, '0')}:${hex(g[1]!)}::${hex(g[2]!)}`, 'unique-local'],
      [(g) => `fc00:${hex(g[1]!)}::${hex(g[2]!)}`, 'unique-local'],
      [(g) => `ff${hex(g[0]! & 0xff).padStart(2, '0')}::${hex(g[1]!)}`, 'multicast'],
      [(g) => `2001:db8:${hex(g[0]!)}::${hex(g[1]!)}`, 'documentation'],
      [(g) => `3fff:${hex(g[0]! & 0xfff)}::${hex(g[1]!)}`, 'documentation'],
      [(g) => `100.${64 + (g[0]! & 63)}.${g[1]! & 255}.${g[2]! & 255}`, 'carrier-grade NAT'],
      [(g) => `169.254.${g[0]! & 255}.${g[1]! & 255}`, 'link-local'],
      [(g) => `${224 + (g[0]! & 15)}.${g[1]! & 255}.${g[2]! & 255}.1`, 'multicast'],
      [(g) => `203.0.113.${g[0]! & 255}`, 'documentation'],
    ]
    fc.assert(
      fc.property(fc.array(fc.nat(0xffff), { minLength: 3, maxLength: 3 }), (g) => {
        for (const [form, label] of cases) expect(classifyAddress(form(g)), form(g)).toEqual({ cls: 'blocked', label })
      }),
      { numRuns: 500 },
    )
    expect(classifyAddress('169.254.169.254')).toEqual({ cls: 'blocked', label: 'link-local' })
    expect(classifyAddress('fd00:ec2::254')).toEqual({ cls: 'blocked', label: 'unique-local' })
    expect(classifyAddress('::ffff:169.254.169.254')).toEqual({ cls: 'blocked', label: 'IPv4-mapped' })
  })
})
