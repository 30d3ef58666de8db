/**
 * Small HTTP helpers shared by the local stand-ins (issuer, push relay, Cloud Tasks, Secret
 * Manager): a loopback listener on a free port, JSON bodies, and Google's JSON error shape,
 * which the client libraries (google-gax REST transport) turn back into gRPC status codes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>

export interface Listener {
  server: Server
  port: number
  /** http://127.0.0.1:<port> */
  origin: string
  close(): Promise<void>
}

/** Listens on 127.0.0.1 (a free port unless given); a handler that throws answers 500. */
export async function listen(handler: Handler, port = 0): Promise<Listener> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { code: 500, status: 'INTERNAL', message: (err as Error).message } })
      else res.destroy()
    })
  })
  server.keepAliveTimeout = 5000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const actual = (server.address() as { port: number }).port
  return {
    server,
    port: actual,
    origin: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export async function readBody(req: IncomingMessage, limit = 32 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > limit) throw new Error('request body too large')
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const body = await readBody(req)
  if (body.length === 0) return {}
  return JSON.parse(body.toString('utf8')) as Record<string, unknown>
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

const HTTP_OF: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
}

/** A Google API error: `{"error": {"code": 404, "status": "NOT_FOUND", "message": …}}`. */
export function sendGoogleError(res: ServerResponse, status: keyof typeof HTTP_OF, message: string): void {
  const code = HTTP_OF[status]!
  sendJson(res, code, { error: { code, status, message } })
}
