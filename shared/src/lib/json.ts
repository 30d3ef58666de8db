import { isUtf8 } from 'node:buffer'
import { AppError } from '../errors/app-error.ts'

/**
 * True when a parsed JSON value holds a prototype-poisoning key: an own `__proto__` key, or an
 * own `constructor` key whose value is an object with an own `prototype` key (what
 * secure-json-parse refuses with its `protoAction` and `constructorAction` at `error`; escapes
 * such as `"\u005f_proto__"` are decoded by the parse, so the keys are checked as they came out).
 * One walk over the parsed value, arrays by index: for an 8 MiB batch it costs about a quarter of
 * the regular-expression scans of the whole text that secure-json-parse ran first on every body
 * (docs/performance.md, "Fourth pass: the 8 MiB batch"). Iterative: hostile depth cannot
 * overflow the stack.
 */
function hasPrototypeKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false
  const stack: object[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i]
        if (typeof v === 'object' && v !== null) stack.push(v)
      }
      continue
    }
    if (Object.hasOwn(node, '__proto__')) return true
    if (Object.hasOwn(node, 'constructor')) {
      const c: unknown = (node as { constructor: unknown }).constructor
      if (typeof c === 'object' && c !== null && Object.hasOwn(c, 'prototype')) return true
    }
    for (const key in node) {
      const v: unknown = (node as Record<string, unknown>)[key]
      if (typeof v === 'object' && v !== null) stack.push(v)
    }
  }
  return false
}

/** from this size on, the bytes are searched before the parsed value is walked (below it the walk costs less than the searches) */
const SEARCH_FROM_BYTES = 16 * 1024

/**
 * True when the text cannot hold a key hasPrototypeKey refuses: neither `proto` (in `__proto__`
 * and in `prototype`) nor `\u` (the only JSON escape that can spell one of their letters) occurs
 * in its bytes. Two byte searches of an 8 MiB batch cost about a third of walking its parse
 * (docs/performance.md, "Fifth pass"); a body holding either is walked as before.
 */
function cannotHoldPrototypeKey(raw: Buffer): boolean {
  return raw.indexOf('proto', 0, 'latin1') === -1 && raw.indexOf('\\u', 0, 'latin1') === -1
}

/**
 * Parses JSON bodies safely: invalid UTF-8, `__proto__` / `constructor.prototype` keys and any
 * syntax error answer 400 `invalid JSON body`, never a 5xx. The raw bytes stay on the request.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new AppError('invalid_json')
  // isUtf8 validates without allocating; toString then decodes (faster than a fatal TextDecoder)
  if (!isUtf8(raw)) throw new AppError('invalid_json')
  let text = raw.toString('utf8')
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1) // a UTF-8 byte order mark is not JSON
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new AppError('invalid_json', { cause })
  }
  if ((raw.length < SEARCH_FROM_BYTES || !cannotHoldPrototypeKey(raw)) && hasPrototypeKey(value))
    throw new AppError('invalid_json', { cause: new SyntaxError('Object contains forbidden prototype property') })
  return value
}
