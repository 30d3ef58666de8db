import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * A TCP listener on every local address (dual-stack `::`), counting each accepted connection
 * and the address it was made to. Any loopback target (127.0.0.1, 127.0.0.2, ::1,
 * ::ffff:127.0.0.1, 0.0.0.0) on `port` lands here, so "0 connections" is measured, not assumed.
 */
export async function startConnectionCounter(port = 0): Promise<{ port: number; count(): number; targets: string[]; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const targets: string[] = []
  const server: Server = createServer((socket) => {
    targets.push(String(socket.localAddress))
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    // answer like an HTTP server would, so a client that got through has a status to show
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host: '::', ipv6Only: false }, () => resolve())
  })
  return {
    port: (server.address() as AddressInfo).port,
    count: () => targets.length,
    targets,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
