import { AppError } from '../../errors/app-error.ts'
import { partnerCrmLocationId } from './mapping.ts'

/**
 * The location a partner CRM body names (contract 4.5: top-level `locationId`, else
 * `location_id`), read from the body's bytes without parsing it.
 *
 * A call whose token did not identify its location is anonymous until the body's location is
 * checked, and parsing costs about 14 times the body's bytes (issue 21, item 3: four anonymous
 * 8 MiB bodies held 1.29 GiB). So the edge keeps such a body as bytes (within the
 * pre-authentication budget: preauth-budget.ts), finds the location here, authenticates, and
 * parses only then. The scan allocates nothing but the two keys' values, walks the bytes once
 * (strings are skipped with Buffer.indexOf) and never recurses, whatever the nesting.
 *
 * It reads what JSON.parse would: the last occurrence of a key wins, keys and values are
 * unescaped, a value that is not a string is not a location. What it cannot see (a bad number,
 * a `__proto__` key, invalid UTF-8, mismatched brackets) the full parse after authentication
 * refuses as before (400 `invalid JSON body`); a body it cannot walk at all is refused here,
 * with the same 400, and a top-level value that is not an object is 400 `invalid payload`.
 */
const QUOTE = 0x22
const BACKSLASH = 0x5c
const KEYS = new Set(['locationId', 'location_id'])
/** a location id is at most 256 characters (auth.ts); a longer escaped value is not one */
const LONGEST_LOCATION_BYTES = 256 * 6 + 2
const LONGEST_KEY_BYTES = 128

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d
const invalidJson = () => new AppError('invalid_json')

export function scanPartnerCrmLocation(raw: Buffer): string | null {
  const n = raw.length
  let i = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? 3 : 0
  const skipSpace = () => {
    while (i < n && isSpace(raw[i])) i++
  }
  /** from an opening quote at `start`: the index after its closing quote */
  const stringEnd = (start: number): number => {
    let from = start + 1
    for (;;) {
      const q = raw.indexOf(QUOTE, from)
      if (q < 0) throw invalidJson()
      let backslashes = 0
      while (q - 1 - backslashes > start && raw[q - 1 - backslashes] === BACKSLASH) backslashes++
      if (backslashes % 2 === 0) return q + 1
      from = q + 1
    }
  }
  /** decodes the JSON string at [start, end), or undefined when longer than `limit` bytes */
  const decode = (start: number, end: number, limit: number): string | undefined => {
    if (end - start > limit) return undefined
    try {
      return JSON.parse(raw.toString('utf8', start, end)) as string
    } catch {
      throw invalidJson()
    }
  }
  /** skips the value at i (any nesting, counted, never recursed) */
  const skipValue = () => {
    const c = raw[i]
    if (c === QUOTE) {
      i = stringEnd(i)
      return
    }
    if (c === 0x7b || c === 0x5b) {
      let depth = 0
      while (i < n) {
        const b = raw[i]
        if (b === QUOTE) {
          i = stringEnd(i)
          continue
        }
        if (b === 0x7b || b === 0x5b) depth++
        else if (b === 0x7d || b === 0x5d) {
          depth--
          if (depth === 0) {
            i++
            return
          }
        }
        i++
      }
      throw invalidJson()
    }
    const start = i
    while (i < n && !isSpace(raw[i]) && raw[i] !== 0x2c && raw[i] !== 0x7d && raw[i] !== 0x5d) i++
    if (i === start) throw invalidJson()
  }

  skipSpace()
  if (raw[i] !== 0x7b) {
    // a JSON value that is not an object is a body of the wrong shape; anything else is not JSON
    if (i < n && /["[\-0-9tfn]/.test(String.fromCharCode(raw[i]!))) throw new AppError('invalid_payload')
    throw invalidJson()
  }
  i++
  const found: Record<string, unknown> = {}
  skipSpace()
  if (raw[i] === 0x7d) i++
  else {
    for (;;) {
      skipSpace()
      if (raw[i] !== QUOTE) throw invalidJson()
      const keyStart = i
      i = stringEnd(i)
      const key = decode(keyStart, i, LONGEST_KEY_BYTES)
      skipSpace()
      if (raw[i] !== 0x3a) throw invalidJson()
      i++
      skipSpace()
      const valueStart = i
      skipValue()
      if (key !== undefined && KEYS.has(key)) {
        // the last occurrence wins, as in JSON.parse; a value too long to be a location is kept
        // as one that matches none (a string of more than 256 characters: 404)
        found[key] = raw[valueStart] === QUOTE ? (decode(valueStart, i, LONGEST_LOCATION_BYTES) ?? 'x'.repeat(257)) : null
      }
      skipSpace()
      if (raw[i] === 0x2c) {
        i++
        continue
      }
      if (raw[i] === 0x7d) {
        i++
        break
      }
      throw invalidJson()
    }
  }
  skipSpace()
  if (i !== n) throw invalidJson()
  return partnerCrmLocationId(found)
}
