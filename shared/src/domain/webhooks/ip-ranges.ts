import { isIP } from 'node:net'

/**
 * Classification of IP addresses for outbound webhooks (SSRF protection). An address is
 * deliverable only when it is public unicast: IPv4 outside every special-purpose block
 * (RFC 6890 and successors), IPv6 inside global unicast 2000::/3 minus the special blocks
 * (documentation, NAT64, 6to4, Teredo, ORCHID…). IPv4-mapped and IPv4-compatible IPv6
 * forms are refused outright rather than unwrapped: a receiver never needs them.
 */

export type AddressClass = 'public' | 'loopback' | 'blocked'

interface Range4 { base: number; bits: number; label: string }

function v4(text: string): number {
  const p = text.split('.').map(Number)
  return (((p[0]! << 24) >>> 0) + (p[1]! << 16) + (p[2]! << 8) + p[3]!) >>> 0
}

const BLOCKED_V4: Range4[] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.31.196.0', 24, 'AS112'],
  ['192.52.193.0', 24, 'AMT'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['192.175.48.0', 24, 'AS112'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
].map(([base, bits, label]) => ({ base: v4(base as string), bits: bits as number, label: label as string }))

function inRange4(addr: number, r: Range4): boolean {
  if (r.bits === 0) return true
  const mask = (0xffffffff << (32 - r.bits)) >>> 0
  return ((addr & mask) >>> 0) === ((r.base & mask) >>> 0)
}

/** Parses any textual IPv6 (with `::` and a dotted IPv4 tail) into 8 groups; null when invalid. */
export function parseIPv6(text: string): number[] | null {
  let s = text
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  if (isIP(s) !== 6) return null
  const lastColon = s.lastIndexOf(':')
  const tail = s.slice(lastColon + 1)
  if (tail.includes('.')) {
    // rewrite a dotted IPv4 tail as two hex groups, then parse as plain IPv6
    const n = v4(tail)
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const halves = s.split('::')
  if (halves.length > 2) return null
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)))
  const head = parse(halves[0]!)
  const rest = halves.length > 1 ? parse(halves[1]!) : []
  const fill = 8 - head.length - rest.length
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null
  const groups = [...head, ...new Array<number>(fill).fill(0), ...rest]
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null
}

interface Range6 { prefix: number[]; bits: number; label: string }
function r6(text: string, bits: number, label: string): Range6 {
  return { prefix: parseIPv6(text)!, bits, label }
}

const BLOCKED_V6: Range6[] = [
  r6('::', 96, 'IPv4-compatible / unspecified'),
  r6('::ffff:0:0', 96, 'IPv4-mapped'),
  r6('::ffff:0:0:0', 96, 'IPv4-translated'),
  r6('64:ff9b::', 96, 'NAT64'),
  r6('64:ff9b:1::', 48, 'local NAT64'),
  r6('100::', 64, 'discard'),
  r6('2001::', 23, 'IETF protocol assignments'),
  r6('2001:db8::', 32, 'documentation'),
  r6('2002::', 16, '6to4'),
  r6('3fff::', 20, 'documentation'),
  r6('5f00::', 16, 'SRv6 SIDs'),
  r6('fc00::', 7, 'unique-local'),
  r6('fe80::', 10, 'link-local'),
  r6('fec0::', 10, 'site-local'),
  r6('ff00::', 8, 'multicast'),
]

function inRange6(groups: number[], r: Range6): boolean {
  let bits = r.bits
  for (let i = 0; i < 8 && bits > 0; i++) {
    const take = Math.min(16, bits)
    const mask = (0xffff << (16 - take)) & 0xffff
    if ((groups[i]! & mask) !== (r.prefix[i]! & mask)) return false
    bits -= take
  }
  return true
}

/** Classifies an IP literal (no brackets). Anything that is not a valid IP is `blocked`. */
export function classifyAddress(address: string): { cls: AddressClass; label: string } {
  const family = isIP(address.split('%')[0]!)
  if (family === 4) {
    const n = v4(address)
    if ((n >>> 24) === 127) return { cls: 'loopback', label: 'loopback' }
    if (n === 0xffffffff) return { cls: 'blocked', label: 'broadcast' }
    for (const r of BLOCKED_V4) if (inRange4(n, r)) return { cls: 'blocked', label: r.label }
    return { cls: 'public', label: 'public' }
  }
  if (family === 6) {
    const g = parseIPv6(address)
    if (!g) return { cls: 'blocked', label: 'invalid' }
    if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return { cls: 'loopback', label: 'loopback' }
    for (const r of BLOCKED_V6) if (inRange6(g, r)) return { cls: 'blocked', label: r.label }
    // only global unicast 2000::/3 is routable on the internet
    if ((g[0]! & 0xe000) !== 0x2000) return { cls: 'blocked', label: 'not global unicast' }
    return { cls: 'public', label: 'public' }
  }
  return { cls: 'blocked', label: 'not an IP address' }
}

/** Whether a resolved or literal address may be connected to. */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const { cls } = classifyAddress(address)
  return cls === 'public' || (cls === 'loopback' && allowLoopback)
}
