import { errorCodes, type FastifyRequest } from 'fastify'

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = errorCodes

/** the request body stream a content-type parser reads (a preParsing hook's stream may count its encoded bytes) */
type BodyStream = NodeJS.ReadableStream & { receivedEncodedLength?: number }

/**
 * A body that came as one chunk owning all of its memory is kept as it is; any other is copied
 * into one Buffer. A chunk that is a view into a larger buffer (a pooled one, or a read buffer
 * shared with other bytes) is copied, so a small body never keeps a larger buffer alive.
 */
function oneBuffer(chunks: readonly Buffer[], length: number): Buffer {
  const only = chunks.length === 1 ? chunks[0]! : null
  if (only && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only
  return Buffer.concat(chunks, length)
}

/**
 * Reads the request body into one Buffer the way fastify 5's `parseAs: 'buffer'` reader does
 * (lib/content-type-parser.js `rawBody`: the same checks, order and errors): a declared
 * `content-length` over the route's body limit is refused before a byte is read, a body passing
 * the limit as it streams in is refused at once (nothing more is kept), and a body whose length
 * differs from its declared one is refused. Unlike fastify's reader it does not copy a body that
 * arrived as one chunk (oneBuffer): for an 8 MiB batch handed over in one piece (`inject`) that
 * copy was about 5 % of the edge's CPU per batch (docs/performance.md, "Fifth pass").
 */
export function readRawBody(request: FastifyRequest, payload: BodyStream, done: (err: Error | null, body?: Buffer) => void): void {
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY
  const contentLength = Number(request.headers['content-length'])
  if (contentLength > limit) {
    done(new FST_ERR_CTP_BODY_TOO_LARGE())
    return
  }
  let receivedLength = 0
  const chunks: Buffer[] = []

  const stop = () => {
    payload.removeListener('data', onData)
    payload.removeListener('end', onEnd)
    payload.removeListener('error', onEnd)
  }
  function onData(data: Buffer | string): void {
    // a preParsing stream may still emit strings
    const chunk = typeof data === 'string' ? Buffer.from(data) : data
    receivedLength += chunk.length
    // the body as the parser gets it must not exceed the limit (a "zip bomb"), nor what came encoded
    if (receivedLength > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      stop()
      done(new FST_ERR_CTP_BODY_TOO_LARGE())
      return
    }
    chunks.push(chunk)
  }
  function onEnd(err?: Error & { statusCode?: number }): void {
    stop()
    if (err != null) {
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400
      done(err)
      return
    }
    if (!Number.isNaN(contentLength) && (payload.receivedEncodedLength || receivedLength) !== contentLength) {
      done(new FST_ERR_CTP_INVALID_CONTENT_LENGTH())
      return
    }
    done(null, oneBuffer(chunks, receivedLength))
  }

  payload.on('data', onData)
  payload.on('end', onEnd)
  payload.on('error', onEnd)
  payload.resume()
}
