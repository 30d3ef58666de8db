import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Behaviour = (req: IncomingMessage, res: ServerResponse, stats: ReceiverStats) => void

interface ReceiverStats {
  requests: number
  /** response body bytes the server managed to write before the client went away */
  bytesWritten: number
  /** requests whose connection the client closed */
  closedByClient: number
}

/** A webhook receiver on 127.0.0.1 with a scripted (usually hostile) behaviour. */
export async function startHostileReceiver(behaviour: Behaviour) {
  const stats: ReceiverStats = { requests: 0, bytesWritten: 0, closedByClient: 0 }
  const timers = new Set<NodeJS.Timeout>()
  const server = createServer((req, res) => {
    stats.requests++
    res.on('close', () => {
      if (!res.writableFinished) stats.closedByClient++
    })
    req.resume()
    req.on('end', () => behaviour(req, res, stats))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stats,
    /** setInterval that is cleared when the receiver closes */
    every(ms: number, fn: () => void) {
      const t = setInterval(fn, ms)
      timers.add(t)
      return () => {
        clearInterval(t)
        timers.delete(t)
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t)
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export const HANG: Behaviour = () => {
  /* never answers */
}

/** Writes `chunk` as long as the socket accepts it, counting bytes, until the client leaves. */
export function endlessBody(chunk: Buffer): Behaviour {
  return (_req, res, stats) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' })
    const pump = () => {
      while (!res.destroyed) {
        stats.bytesWritten += chunk.length
        if (!res.write(chunk)) return void res.once('drain', pump)
      }
    }
    res.on('close', () => res.removeAllListeners('drain'))
    pump()
  }
}
