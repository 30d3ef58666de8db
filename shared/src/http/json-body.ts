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

/** requests whose body is kept as bytes until their caller is identified (deferJsonParsing) */
const deferred = new WeakSet<FastifyRequest>()

/**
 * Keeps this request's body as bytes: `request.body` is the Buffer (also `rawBody`), not parsed.
 * For a route that reads a body before it knows the caller (the partner CRM names its location
 * in the body): parsing costs many times the bytes, so it waits until the caller is identified
 * (parseDeferredBody). And for a route that keeps only what it reads of the parsed body
 * (useDeferredBody): the parsed body is never on the request, so it goes as soon as it is read.
 * Call before the body is read (onRequest or preParsing).
 */
export function deferJsonParsing(request: FastifyRequest): void {
  deferred.add(request)
}

/** The deferred body parsed, as the parser would have (a large body in a slice of its own). */
export async function parseDeferredBody(request: FastifyRequest): Promise<unknown> {
  const raw = request.rawBody ?? Buffer.alloc(0)
  if (raw.length >= LARGE_BODY_BYTES) await nextSlice()
  return parseJsonBody(raw)
}

/**
 * The deferred body parsed as the parser would have (a large body in a slice of its own) and
 * handed to `use`, whose result is returned: nothing else holds the parsed body, so what `use`
 * does not keep is garbage once it returns (an 8 MiB batch parses to about 8 MiB more).
 */
export async function useDeferredBody<T>(request: FastifyRequest, use: (body: unknown) => T | Promise<T>): Promise<T> {
  const raw = request.rawBody
  // no body at all (no content type, no length): no parser ran, and `use` sees no body, as the route would without deferring
  if (raw === undefined) return use(request.body)
  if (raw.length >= LARGE_BODY_BYTES) await nextSlice()
  return use(parseJsonBody(raw))
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
    if (deferred.has(request)) {
      request.rawBody = body
      return done(null, body)
    }
    // a large body is tens of milliseconds of parsing: at most one such slice per turn of the
    // event loop (lib/slices.ts), so bodies completing together do not hold /healthz
    if (body.length >= LARGE_BODY_BYTES) void nextSlice().then(() => parse(request, body, done))
    else parse(request, body, done)
  }
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser)
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser)
}
