/**
 * Whether `text` has at most `max` characters, counted as Unicode code points.
 *
 * Why: the contract and the docs state length limits in characters, and the schemas that enforce
 * them (`maxLength`, checked by Ajv) count code points. A string's `.length` counts UTF-16 units,
 * two for every character outside the Basic Multilingual Plane (an emoji, many CJK ideographs), so
 * a limit checked with `.length` refuses values the schemas accept: an `externalId` of 256 emoji
 * could be minted a link but was dropped as an anchor at ingest. Counted exactly as Ajv counts (a
 * high surrogate followed by a low one is one character; a lone surrogate is one too).
 *
 * Cheap on the hot path (it runs per inbound record): a code point is one or two units, so a
 * string within `max` units, or over `2 * max`, is decided by its `.length` alone; only a string
 * in between is walked, and the walk stops at the first character over the limit.
 */
export function atMostCodePoints(text: string, max: number): boolean {
  const units = text.length
  if (units <= max) return true
  if (units > 2 * max) return false
  let count = 0
  for (let i = 0; i < units; i++) {
    const unit = text.charCodeAt(i)
    // a high surrogate followed by a low one: both units are one character
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < units && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
    if (++count > max) return false
  }
  return true
}
