import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { ERROR_CODES, type ErrorCode } from '../errors/codes.ts'
import { isDraining } from './lingering-close.ts'

/**
 * Errors node raises on a connection before fastify sees a request (the server's `clientError`):
 * a header or request timeout (408), headers over the size limit (431), a message that is not
 * HTTP/1.1 (400). fastify's default answer has its own body; this one is the contract's envelope
 * `{ok: false, error}` with the texts of shared/src/errors/codes.ts.
 *
 * The answer is written only when nothing of an answer has gone out on the connection yet (no
 * response in flight with headers sent, and no answered request being drained: lingering-close).
 * The connection is then closed after a short grace, so the client can read the answer before
 * any reset caused by bytes it is still sending.
 */
const GRACE_MS = 2_000

const handled = new WeakSet<Socket>()

function clientErrorCode(err: { code?: string }): ErrorCode {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout'
    case 'HPE_HEADER_OVERFLOW':
      return 'headers_too_large'
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'payload_too_large'
    default:
      return 'bad_request'
  }
}

function clientErrorResponse(code: ErrorCode): string {
  const { status, message } = ERROR_CODES[code]
  const body = JSON.stringify({ ok: false, error: message })
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nConnection: close\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

export function handleClientError(log: FastifyBaseLogger, err: Error & { code?: string }, socket: Socket): void {
  if (handled.has(socket)) return
  handled.add(socket)
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
    socket.destroy()
    return
  }
  const inFlight = (socket as Socket & { _httpMessage?: { _headerSent?: boolean } | null })._httpMessage
  if (isDraining(socket) || inFlight?._headerSent) {
    socket.destroy()
    return
  }
  refuseConnection(log, clientErrorCode(err), err.code ?? err.message, socket)
}

/**
 * A `CONNECT` request (a tunnel, which no service offers): node has no answer of its own for one
 * and destroys the socket when nothing listens for `connect`, so the client got no answer at all.
 * It gets 405 `method not allowed` in the envelope, then the connection is closed.
 */
export function refuseConnect(log: FastifyBaseLogger, socket: Socket): void {
  if (handled.has(socket)) return
  handled.add(socket)
  refuseConnection(log, 'method_not_allowed', 'CONNECT', socket)
}

/** The envelope's answer on the bare socket, then the connection closed after the grace. */
function refuseConnection(log: FastifyBaseLogger, code: ErrorCode, reason: string, socket: Socket): void {
  log.info({ code, reason }, 'connection refused before routing')
  socket.end(clientErrorResponse(code))
  const timer = setTimeout(() => socket.destroy(), GRACE_MS)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  // keep reading (and dropping) what the client still sends during the grace
  socket.on('data', () => {})
  socket.resume()
}
