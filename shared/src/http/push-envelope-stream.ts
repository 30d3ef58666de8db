/**
 * A Pub/Sub push body read without its `message.data`, for the endpoints that act on attributes
 * alone (the `-dead-letter-alerts` pushes: a dead letter carries the whole failed message, up to
 * about 13 MB of base64). The body is scanned as it arrives, byte by byte, and copied except for
 * the characters of `message.data`'s string, which are dropped (it becomes `""`): the process
 * never holds the data as a string, never decodes it, and holds at most the envelope's other
 * fields. Everything else is left to JSON.parse on the small copy, so a malformed body is still
 * refused as one.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a
const COMMA = 0x2c
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
/** a key longer than this is not one we look for: only its first bytes are kept */
const KEY_BYTES = 32

interface Level {
  object: boolean
  /** in an object: the next string is a key (before its colon) */
  expectingKey: boolean
  /** in an object: the key whose value comes (or is being read) */
  key: string
}

export interface EnvelopeScanner {
  write(chunk: Buffer): void
  /** the envelope as JSON text, `message.data` emptied */
  end(): string
}

export function scanPushEnvelopeWithoutData(): EnvelopeScanner {
  const out: Buffer[] = []
  const stack: Level[] = []
  let inString = false
  let escaped = false
  let skipping = false
  let readingKey = false
  let keyBytes: number[] = []

  const top = () => stack[stack.length - 1]
  /** the string starting here is the value of `message.data` */
  const atMessageData = () =>
    stack.length === 2 && stack[0]!.object && stack[0]!.key === 'message' && stack[1]!.object && !stack[1]!.expectingKey && stack[1]!.key === 'data'

  return {
    write(chunk) {
      let copyFrom = 0
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!
        if (inString) {
          if (escaped) escaped = false
          else if (c === BACKSLASH) escaped = true
          else if (c === QUOTE) {
            inString = false
            if (skipping) {
              skipping = false
              copyFrom = i // the closing quote is copied
            }
            if (readingKey) {
              readingKey = false
              top()!.key = Buffer.from(keyBytes).toString('latin1')
            }
            continue
          }
          if (readingKey && keyBytes.length < KEY_BYTES) keyBytes.push(c)
          continue
        }
        const level = top()
        if (c === QUOTE) {
          inString = true
          if (level?.object && level.expectingKey) {
            readingKey = true
            keyBytes = []
          } else if (atMessageData()) {
            skipping = true
            out.push(chunk.subarray(copyFrom, i + 1)) // up to and with the opening quote
          }
        } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
          stack.push({ object: c === OPEN_OBJECT, expectingKey: c === OPEN_OBJECT, key: '' })
        } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
          stack.pop()
        } else if (c === COLON && level?.object) {
          level.expectingKey = false
        } else if (c === COMMA && level?.object) {
          level.expectingKey = true
        }
      }
      if (!skipping) out.push(chunk.subarray(copyFrom))
    },
    end() {
      return Buffer.concat(out).toString('utf8')
    },
  }
}
