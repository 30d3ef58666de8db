/**
 * Byte-level mutations of a valid request body (the "mutation" half of the fuzzing item):
 * each takes the body and a random source and returns a damaged copy.
 */
const TOKENS = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  ':',
  '\\',
  '\u0000',
  'null',
  'true',
  '1e999',
  '-0',
  '"\\ud800"',
  '"\\u0000"',
  '__proto__',
  '{"__proto__":{"x":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '[[[[[[[[[[',
  `"${'a'.repeat(5000)}"`,
  '\uFEFF',
  '\r\n',
  '9'.repeat(400),
]

export type Rng = () => number

export function mutateBytes(body: string, rng: Rng): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)]!
  const at = () => Math.floor(rng() * (body.length + 1))
  switch (Math.floor(rng() * 8)) {
    case 0: {
      // flip one character
      const i = Math.floor(rng() * Math.max(1, body.length))
      return body.slice(0, i) + String.fromCharCode(Math.floor(rng() * 256)) + body.slice(i + 1)
    }
    case 1:
      return body.slice(0, at()) // truncate
    case 2: {
      const i = at()
      return body.slice(0, i) + pick(TOKENS) + body.slice(i)
    } // insert a token
    case 3: {
      const i = at()
      const j = at()
      const [a, b] = i < j ? [i, j] : [j, i]
      return body.slice(0, a) + body.slice(b)
    } // delete a range
    case 4: {
      const i = at()
      const j = Math.min(body.length, i + 1 + Math.floor(rng() * 40))
      return body.slice(0, j) + body.slice(i, j) + body.slice(j)
    } // duplicate a range
    case 5:
      return body.replace(/"[^"]*"/, pick(['1', 'null', '[]', '{}', 'true', '"x"'])) // change a key or value type
    case 6:
      return '['.repeat(1 + Math.floor(rng() * 5000)) + body // deep nesting
    default:
      return `${body}${pick(TOKENS)}` // trailing garbage
  }
}

/** Replaces one value somewhere in a JSON value with `replacement` (structural mutation). */
export function replaceSomewhere(value: unknown, replacement: unknown, rng: Rng): unknown {
  if (Array.isArray(value)) {
    if (value.length === 0 || rng() < 0.25) return replacement
    const copy = [...value]
    const i = Math.floor(rng() * copy.length)
    copy[i] = replaceSomewhere(copy[i], replacement, rng)
    return copy
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
    if (keys.length === 0 || rng() < 0.25) return replacement
    const k = keys[Math.floor(rng() * keys.length)]!
    return { ...(value as Record<string, unknown>), [k]: replaceSomewhere((value as Record<string, unknown>)[k], replacement, rng) }
  }
  return replacement
}
