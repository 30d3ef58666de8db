import type { FastifyInstance, FastifyRequest } from 'fastify'
import { parseJsonBody } from '../lib/json.ts'
import { nextSlice } from '../lib/slices.ts'

/** bodies from this size on are parsed in a slice of their own */
const LARGE_BODY_BYTES = 256 * 1024

declare module 'fastify' {
  interface FastifyRequest {
    /** the exact request body bytes (JSON routes), so a batch can be queued without re-serializing */
    rawBody?: Buffer
  }
}

/**
 * Registers the parser for `application/json` and, because automation platforms often send
 * JSON with another or no content type, for every other content type too.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = (request: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void) => {
    request.rawBody = body
    try {
      done(null, parseJsonBody(body))
    } catch (err) {
      done(err as Error)
    }
  }
  const parser = (request: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void) => {
    // a large body is tens of milliseconds of parsing: at most one such slice per turn of the
    // event loop (lib/slices.ts), so bodies completing together do not hold /healthz
    if (body.length >= LARGE_BODY_BYTES) void nextSlice().then(() => parse(request, body, done))
    else parse(request, body, done)
  }
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser)
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser)
}
