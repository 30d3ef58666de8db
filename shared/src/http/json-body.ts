import sjson from 'secure-json-parse'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../errors/app-error.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** the exact request body bytes (JSON routes), so a batch can be queued without re-serializing */
    rawBody?: Buffer
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/**
 * Parses JSON bodies safely: invalid UTF-8, `__proto__` / `constructor.prototype` keys and any
 * syntax error answer 400 `invalid JSON body`, never a 5xx. The raw bytes stay on the request.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new AppError('invalid_json')
  let text: string
  try {
    text = utf8.decode(raw)
  } catch (cause) {
    throw new AppError('invalid_json', { cause })
  }
  try {
    return sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (cause) {
    throw new AppError('invalid_json', { cause })
  }
}

/**
 * Registers the parser for `application/json` and, because automation platforms often send
 * JSON with another or no content type, for every other content type too.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parser = (request: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void) => {
    request.rawBody = body
    try {
      done(null, parseJsonBody(body))
    } catch (err) {
      done(err as Error)
    }
  }
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser)
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser)
}
