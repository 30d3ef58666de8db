import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Classification of IP addresses for outbound webhooks (SSRF protection). An address is
 * deliverable only when it is public unicast: IPv4 outside every special-purpose block
 * (RFC 6890 and successors), IPv6 inside global unicast 2000::/3 minus the special blocks
 * (documentation, NAT64, 6to4, Teredo, ORCHID…). IPv4-mapped and IPv4-compatible IPv6
 * forms are refused outright rather than unwrapped: a receiver never needs them.
 *
 * Parsing and prefix matching are ipaddr.js's (the library behind fastify's proxy-addr); the
 * table of blocks is our policy, with the label an operator reads as the reason. ipaddr.js's own
 * range() names are not used: they group differently (its IPv4 `reserved` lumps documentation,
 * benchmarking and 240/4 together) and its IPv6 table lacks blocks we refuse (3fff::/20, 5f00::/16,
 * site-local). Which strings count as an address at all is node:net's isIP (dotted quads only:
 * the shorthand and octal forms ipaddr.js would also accept never reach a socket as such).
 */

export type AddressClass = 'public' | 'loopback' | 'blocked'

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Ranges = Record<string, Array<[Address, number]>>

/** label -> CIDR blocks, parsed once. Blocks do not overlap, so the order only sets the table's reading order. */
function ranges(table: Record<string, string[]>): Ranges {
  return Object.fromEntries(Object.entries(table).map(([label, cidrs]) => [label, cidrs.map((c) => ipaddr.parseCIDR(c))]))
}

const LOOPBACK_V4 = ipaddr.parseCIDR('127.0.0.0/8')
const BROADCAST_V4 = ipaddr.parseCIDR('255.255.255.255/32')

const BLOCKED_V4 = ranges({
  'this network': ['0.0.0.0/8'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'],
  'carrier-grade NAT': ['100.64.0.0/10'],
  'link-local': ['169.254.0.0/16'], // includes the metadata server 169.254.169.254
  'IETF protocol assignments': ['192.0.0.0/24'],
  documentation: ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'],
  AS112: ['192.31.196.0/24', '192.175.48.0/24'],
  AMT: ['192.52.193.0/24'],
  '6to4 relay anycast': ['192.88.99.0/24'],
  benchmarking: ['198.18.0.0/15'],
  multicast: ['224.0.0.0/4'],
  reserved: ['240.0.0.0/4'],
})

const LOOPBACK_V6 = ipaddr.parseCIDR('::1/128')
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3')

const BLOCKED_V6 = ranges({
  'IPv4-compatible / unspecified': ['::/96'],
  'IPv4-mapped': ['::ffff:0:0/96'],
  'IPv4-translated': ['::ffff:0:0:0/96'],
  NAT64: ['64:ff9b::/96'],
  'local NAT64': ['64:ff9b:1::/48'],
  discard: ['100::/64'],
  // includes Teredo 2001::/32, benchmarking, ORCHID
  'IETF protocol assignments': ['2001::/23'],
  documentation: ['2001:db8::/32', '3fff::/20'],
  '6to4': ['2002::/16'],
  'SRv6 SIDs': ['5f00::/16'],
  'unique-local': ['fc00::/7'],
  'link-local': ['fe80::/10'],
  'site-local': ['fec0::/10'],
  multicast: ['ff00::/8'],
})

const PUBLIC = 'public'

/**
 * Parses any textual IPv6 (with `::` and a dotted IPv4 tail; a zone is cut off) into 8 groups;
 * null when invalid. The WHATWG URL parser first rewrites it in canonical form (hex groups only):
 * ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, RFC 4291 as IPv4-compatible.
 */
export function parseIPv6(text: string): number[] | null {
  const bare = text.split('%')[0]!
  if (isIP(bare) !== 6) return null
  try {
    const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1)
    return ipaddr.IPv6.parse(canonical).parts
  } catch {
    return null
  }
}

/** Classifies an IP literal (no brackets). Anything that is not a valid IP is `blocked`. */
export function classifyAddress(address: string): { cls: AddressClass; label: string } {
  if (isIP(address) === 4) {
    const v4 = ipaddr.IPv4.parse(address)
    if (v4.match(LOOPBACK_V4)) return { cls: 'loopback', label: 'loopback' }
    if (v4.match(BROADCAST_V4)) return { cls: 'blocked', label: 'broadcast' }
    const label = ipaddr.subnetMatch(v4, BLOCKED_V4, PUBLIC)
    return label === PUBLIC ? { cls: 'public', label } : { cls: 'blocked', label }
  }
  if (isIP(address.split('%')[0]!) === 6) {
    const groups = parseIPv6(address)
    if (!groups) return { cls: 'blocked', label: 'invalid' }
    const v6 = new ipaddr.IPv6(groups)
    if (v6.match(LOOPBACK_V6)) return { cls: 'loopback', label: 'loopback' }
    const label = ipaddr.subnetMatch(v6, BLOCKED_V6, PUBLIC)
    if (label !== PUBLIC) return { cls: 'blocked', label }
    // only global unicast 2000::/3 is routable on the internet
    if (!v6.match(GLOBAL_UNICAST_V6)) return { cls: 'blocked', label: 'not global unicast' }
    return { cls: 'public', label: PUBLIC }
  }
  return { cls: 'blocked', label: 'not an IP address' }
}

/** Whether a resolved or literal address may be connected to. */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const { cls } = classifyAddress(address)
  return cls === 'public' || (cls === 'loopback' && allowLoopback)
}
