import type { IncomingHttpHeaders } from 'node:http'

/** How many response headers an attempt keeps, and how long each value may be (UTF-8 bytes). */
const MAX_KEPT_HEADERS = 20
const MAX_HEADER_VALUE_BYTES = 256
const MAX_HEADER_NAME_CHARS = 64

/**
 * Names whose values may be credentials (a receiver's session cookie, a token it echoes): the
 * delivery log is shown to everyone with portal access, so the value is never stored, only that
 * the header was there.
 */
const SECRET_NAME = /cookie|authori[sz]ation|token|secret|password|session|api[-_]?key|signature/i
const REDACTED = '[redacted]'

function cut(value: string): string {
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length <= MAX_HEADER_VALUE_BYTES) return value
  // cut on a byte bound, then drop a partial character the cut may have left (U+FFFD)
  return `${bytes
    .subarray(0, MAX_HEADER_VALUE_BYTES)
    .toString('utf8')
    .replace(/\uFFFD+$/, '')}…`
}

/**
 * The headers of a receiver's answer as the delivery log keeps them (the delivery debugger shows
 * them): the first MAX_KEPT_HEADERS in the order received, each value cut to
 * MAX_HEADER_VALUE_BYTES, credential-like values replaced. Bounded because a receiver chooses
 * what it answers and every attempt is stored.
 */
export function keptResponseHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {}
  let n = 0
  for (const [rawName, rawValue] of Object.entries(headers)) {
    if (n === MAX_KEPT_HEADERS) break
    if (rawValue === undefined) continue
    const name = rawName.toLowerCase().slice(0, MAX_HEADER_NAME_CHARS)
    const value = Array.isArray(rawValue) ? rawValue.join(', ') : String(rawValue)
    kept[name] = SECRET_NAME.test(name) ? REDACTED : cut(value)
    n++
  }
  return kept
}
