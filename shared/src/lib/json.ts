import { isUtf8 } from 'node:buffer'
import sjson from 'secure-json-parse'
import { AppError } from '../errors/app-error.ts'

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
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (cause) {
    throw new AppError('invalid_json', { cause })
  }
}
