import { connect, type Socket } from 'node:net'

/**
 * A raw TCP client for what no HTTP client library sends on purpose: bytes dripped one at a time,
 * oversized or repeated headers, garbage. It records everything the server sent and when the
 * server closed the connection.
 */
export interface RawConnection {
  socket: Socket
  /** everything received so far */
  received(): string
  /** resolves when the server has closed (or reset) the connection: what it sent, and whether it was a reset */
  closed: Promise<{ text: string; reset: boolean }>
  write(data: string | Buffer): Promise<void>
  /**
   * Resolves as soon as `done(received())` holds or the connection is closed, or after `ms` (a
   * bound on waiting, never a measurement): woken by each arriving chunk, where polling on a timer
   * waited up to a whole interval after the answer had come.
   */
  until(done: (text: string) => boolean, ms: number): Promise<void>
  /** writes `data` one byte every `everyMs` until written or the connection closes */
  drip(data: string, everyMs: number): Promise<void>
}

export async function rawConnect(port: number): Promise<RawConnection> {
  const socket = connect({ host: '127.0.0.1', port })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const chunks: Buffer[] = []
  let reset = false
  socket.on('data', (d: Buffer) => chunks.push(d))
  socket.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true
  })
  const received = () => Buffer.concat(chunks).toString('latin1')
  const closed = new Promise<{ text: string; reset: boolean }>((resolve) => socket.once('close', () => resolve({ text: received(), reset })))
  return {
    socket,
    received,
    closed,
    write: (data) =>
      new Promise<void>((resolve) => {
        if (socket.destroyed) return resolve()
        socket.write(data, () => resolve())
      }),
    until: (done, ms) =>
      new Promise<void>((resolve) => {
        const finish = () => {
          clearTimeout(timer)
          socket.off('data', check)
          socket.off('close', finish)
          resolve()
        }
        // registered after the recording listener above: received() already holds the chunk
        const check = () => {
          if (done(received()) || socket.destroyed) finish()
        }
        const timer = setTimeout(finish, ms)
        socket.on('data', check)
        socket.once('close', finish)
        check()
      }),
    async drip(data, everyMs) {
      for (const byte of Buffer.from(data, 'latin1')) {
        if (socket.destroyed || socket.writableEnded) return
        socket.write(Buffer.of(byte))
        await new Promise((r) => setTimeout(r, everyMs))
      }
    },
  }
}

/** The status and JSON body of the first HTTP response in `text` (Content-Length framed). */
export function firstResponse(text: string): { status: number; headers: Record<string, string>; body: unknown } | null {
  const end = text.indexOf('\r\n\r\n')
  if (end < 0) return null
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')?.[1])
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  const length = Number(headers['content-length'] ?? 0)
  const raw = text.slice(end + 4, end + 4 + length)
  let body: unknown = raw
  try {
    body = JSON.parse(raw)
  } catch {
    /* not JSON */
  }
  return { status, headers, body }
}

/** Resolves with `promise`, or with `fallback` after `ms` (a bound on waiting, never a measurement). */
export function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  return Promise.race([promise, new Promise<T>((resolve) => setTimeout(() => resolve(fallback), ms).unref())])
}
