import { isIP } from 'node:net'
import { LRUCache } from 'lru-cache'
import { classifyAddress } from '../../lib/ip-ranges.ts'

export const MAX_DESTINATION_URL_LENGTH = 2048

type StaticCheck = Readonly<{ ok: true; host: string; literal: boolean } | { ok: false; reason: string }>

/** `[::1]` -> `::1`; the WHATWG URL keeps brackets around IPv6 hosts. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/**
 * The answers for the last URLs checked, per loopback policy: every delivery checks its endpoint's
 * URL again, and parsing and classifying it was 1.5–1.7 % of a delivery's CPU. The answer depends
 * on the text alone (no DNS), so it never goes stale. The keys are the destination URLs tenants
 * gave (integration creation checks them too): kept in memory only, like the integrations the
 * process delivers to, never written to a sink.
 */
const remembered = [new LRUCache<string, StaticCheck>({ max: 1_000 }), new LRUCache<string, StaticCheck>({ max: 1_000 })] as const

/**
 * The check of a webhook destination, at integration creation and again before each delivery:
 * scheme, credentials, and the host when it is an IP literal or an obviously internal name. It
 * never resolves a name: what a name resolves to is checked where it matters, on the addresses the
 * socket is handed (safe-agent.ts filteringLookup drops every refused one, so DNS rebinding
 * between a check and the connect cannot reach an internal address). The WHATWG URL parser has
 * already normalized decimal (`2130706433`), hex (`0x7f.1`) and octal (`0177.0.0.1`) IPv4 forms
 * to dotted quads, so the check runs on the parsed hostname, never on the raw text. Returns the
 * bare host for a name still to resolve.
 */
export function checkUrlStatically(raw: string, allowLoopback: boolean): StaticCheck {
  if (typeof raw !== 'string' || raw.length > MAX_DESTINATION_URL_LENGTH) return checkUrlOnce(raw, allowLoopback)
  const checked = remembered[allowLoopback ? 1 : 0]
  let result = checked.get(raw)
  if (result === undefined) checked.set(raw, (result = Object.freeze(checkUrlOnce(raw, allowLoopback))))
  return result
}

function checkUrlOnce(raw: string, allowLoopback: boolean): StaticCheck {
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
