import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { classifyAddress, isAllowedAddress } from './ip-ranges.ts'

export type DestinationCheck = { ok: true } | { ok: false; reason: string }

/** Resolves a host name to every address it has (injectable for tests). */
export type HostResolver = (hostname: string) => Promise<string[]>

export interface DestinationCheckOptions {
  /** local development only (config.allowLoopbackWebhooks): loopback receivers are accepted */
  allowLoopback: boolean
  /** defaults to the system resolver (all A and AAAA records) */
  resolve?: HostResolver
}

export const MAX_DESTINATION_URL_LENGTH = 2048

export const systemResolver: HostResolver = async (hostname) => {
  const rows = await dnsLookup(hostname, { all: true, verbatim: true })
  return rows.map((r) => r.address)
}

/** `[::1]` -> `::1`; the WHATWG URL keeps brackets around IPv6 hosts. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/**
 * The part of the check that needs no network: scheme, credentials, and the host when it is an
 * IP literal. The WHATWG URL parser has already normalized decimal (`2130706433`), hex
 * (`0x7f.1`) and octal (`0177.0.0.1`) IPv4 forms to dotted quads, so the check runs on the
 * parsed hostname, never on the raw text. Returns the bare host for a name still to resolve.
 */
export function checkUrlStatically(raw: string, allowLoopback: boolean): { ok: true; host: string; literal: boolean } | { ok: false; reason: string } {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_DESTINATION_URL_LENGTH) return { ok: false, reason: 'URL length out of range' }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: 'not an absolute URL' }
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'scheme must be https or http' }
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'credentials in URL are not allowed' }
  const host = bareHost(url.hostname)
  if (host === '') return { ok: false, reason: 'missing host' }
  if (isIP(host) !== 0) {
    const { cls, label } = classifyAddress(host)
    if (cls === 'public' || (cls === 'loopback' && allowLoopback)) return { ok: true, host, literal: true }
    return { ok: false, reason: `address not allowed (${label})` }
  }
  // a name: refuse the obviously-internal ones without asking DNS
  const lower = host.toLowerCase().replace(/\.$/, '')
  if (lower === 'localhost' || lower.endsWith('.localhost')) {
    return allowLoopback ? { ok: true, host: lower, literal: false } : { ok: false, reason: 'address not allowed (loopback)' }
  }
  if (!lower.includes('.') || lower.endsWith('.internal') || lower.endsWith('.local')) {
    return { ok: false, reason: 'host is not a public name' }
  }
  return { ok: true, host: lower, literal: false }
}

/**
 * Whether a webhook destination may be used: at integration creation and again at send time
 * (where the connecting agent additionally filters the addresses it actually connects to, see
 * `safe-agent.ts`). Every resolved address must be allowed, so a name with one private record
 * is refused (DNS answers can rotate between check and connect). `allowLoopback` permits
 * loopback only, never private or link-local ranges.
 */
export async function checkDestinationUrl(url: string, options: DestinationCheckOptions): Promise<DestinationCheck> {
  const s = checkUrlStatically(url, options.allowLoopback)
  if (!s.ok) return s
  if (s.literal) return { ok: true }
  let addresses: string[]
  try {
    addresses = await (options.resolve ?? systemResolver)(s.host)
  } catch {
    return { ok: false, reason: 'host does not resolve' }
  }
  if (addresses.length === 0) return { ok: false, reason: 'host does not resolve' }
  for (const a of addresses) {
    if (!isAllowedAddress(a, options.allowLoopback)) return { ok: false, reason: `address not allowed (${classifyAddress(a).label})` }
  }
  return { ok: true }
}
