import type { IncomingHttpHeaders } from 'node:http'
import { redactHeaderValue } from '../../logging/redact.ts'

/** How many response headers an attempt keeps, and how long each value may be (UTF-8 bytes). */
const MAX_KEPT_HEADERS = 20
const MAX_HEADER_VALUE_BYTES = 256
const MAX_HEADER_NAME_CHARS = 64

/** values this short fit whatever they hold: a UTF-16 code unit is at most 3 UTF-8 bytes */
const SURELY_FITS_CHARS = Math.floor(MAX_HEADER_VALUE_BYTES / 3)

function cut(value: string): string {
  // most values (content-type, date, content-length…) are short: no copy to count their bytes
  if (value.length <= SURELY_FITS_CHARS) return value
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
 * MAX_HEADER_VALUE_BYTES, credential values replaced (logging/redact.ts). Bounded because a receiver chooses
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
    // the delivery log is shown to everyone with portal access: a credential's value is never kept
    kept[name] = cut(redactHeaderValue(name, value))
    n++
  }
  return kept
}
