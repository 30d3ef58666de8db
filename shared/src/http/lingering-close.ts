import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Answering before the request body has been read (413 over the cap, 401 before the body,
 * 503 when the pre-authentication budget is spent, …) and then closing the connection the way
 * node does by default loses the answer at many clients: the socket is destroyed while the
 * client is still sending, the kernel answers the unread bytes with a reset, and a client that
 * reads its answer only after sending (Python's urllib, often fetch and node:http) gets
 * EPIPE/ECONNRESET instead of the status and body.
 *
 * So, as careful servers do (nginx's lingering close), after such an answer the rest of the body
 * is read and discarded (nothing is kept) until it has all arrived, or the client closes, or a
 * bound is reached (LINGER.maxBytes discarded, or LINGER.maxMs after the answer): only at the
 * bound is the socket destroyed. When the connection closes after the answer (`Connection:
 * close`: the client asked for it, the declared length is beyond the bound, or a 408 to a body
 * that stopped arriving: closesAfterEarlyAnswer) the server sends FIN after the answer and keeps
 * reading until then. Otherwise the connection stays usable once the body has been drained, so
 * early answers carry the same headers as late ones (the partner CRM's 404s must be identical,
 * contract 7.6): fastify's own `Connection: close` after a body error (a 413 over the cap among
 * them: "the client may send more data") is taken off the answer, the drain reads that data.
 */
export interface LingerLimits {
  /** bytes discarded after the answer before giving up (twice the 8 MiB cap: an over-cap body is read whole) */
  maxBytes: number
  /** time after the answer before giving up */
  maxMs: number
}

export const LINGER: LingerLimits = { maxBytes: 16 * 1024 * 1024, maxMs: 30_000 }

/** sockets whose answer is written while its body is still being drained: nothing more is written to them meanwhile */
const draining = new WeakSet<Socket>()

export function isDraining(socket: Socket): boolean {
  return draining.has(socket)
}

/** True when the request announces a body (a length above 0, or chunked) that has not been read completely. */
export function hasUnreadBody(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false
  const length = req.headers['content-length']
  if (length !== undefined) return length !== '0'
  return req.headers['transfer-encoding'] !== undefined
}

/** True when the declared body is so large that draining it would give up anyway: answer with `Connection: close`. */
function beyondDrainBound(req: IncomingMessage, limits: LingerLimits = LINGER): boolean {
  const length = Number(req.headers['content-length'])
  return Number.isFinite(length) && length > limits.maxBytes
}

/**
 * Whether an answer with status `statusCode`, given while `req`'s body is unread, closes the
 * connection (`Connection: close`): when the declared body is beyond the drain bound, and for a
 * 408 (the body stopped arriving: a dripping client's connection is closed, docs/errors.md
 * "Timeouts"). Any other early answer leaves the connection usable once the body is drained: a
 * body declared within the bound, or chunked (drained within the same bound).
 */
export function closesAfterEarlyAnswer(req: IncomingMessage, statusCode: number, limits: LingerLimits = LINGER): boolean {
  return statusCode === 408 || beyondDrainBound(req, limits)
}

/**
 * Starts draining `req`'s unread body for an answer that is about to be sent (call from onSend).
 * Bytes are counted as they are discarded (node's own discarding would not count them).
 */
export function drainAfterAnswer(req: IncomingMessage, res: ServerResponse, limits: LingerLimits = LINGER): void {
  const socket = req.socket
  // an injected request (light-my-request) has no real socket: nothing to drain
  if (!socket || typeof socket.destroySoon !== 'function' || draining.has(socket) || socket.destroyed) return
  draining.add(socket)
  let discarded = 0
  let closing = false
  let settled = false
  let timer: NodeJS.Timeout | undefined

  const settle = (destroy: boolean) => {
    if (settled) return
    settled = true
    if (timer) clearTimeout(timer)
    req.off('data', onData)
    res.off('finish', onAnswered)
    // a kept-alive socket serves more requests: one close listener per drained body (holding its
    // request and answer) would pile up for as long as the client keeps the connection busy
    socket.off('close', onClose)
    draining.delete(socket)
    if (destroy) socket.destroy()
  }
  const onClose = () => settle(false)
  const giveUp = () => settle(true)
  const onData = (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > limits.maxBytes && res.writableFinished) giveUp()
  }
  // the whole body arrived: nothing unread is left, so a close sends no reset
  const onBodyEnd = () => settle(closing)
  const onAnswered = () => {
    if (discarded > limits.maxBytes) return giveUp()
    timer = setTimeout(giveUp, limits.maxMs)
    timer.unref()
  }

  req.on('data', onData)
  req.once('end', onBodyEnd)
  res.once('finish', onAnswered)
  socket.once('close', onClose)
  req.resume()

  // node calls destroySoon() once an answer with `Connection: close` is written: FIN now (the
  // server's sockets are half-open, reading goes on), destroy once the body is drained
  const destroySoon = socket.destroySoon.bind(socket)
  socket.destroySoon = () => {
    socket.destroySoon = destroySoon
    if (settled) return destroySoon()
    closing = true
    socket.end()
    socket.once('end', giveUp) // the client closed its side: nothing more will come
  }
}
