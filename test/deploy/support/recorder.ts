import { createServer, type IncomingHttpHeaders } from 'node:http'

/** One request as a Google REST API would receive it. */
export interface RecordedRequest {
  method: string
  /** path without the query */
  path: string
  query: Record<string, string>
  headers: IncomingHttpHeaders
  /** the parsed JSON body, or null without one */
  json: unknown
}

export interface Reply {
  status: number
  body: unknown
}

/**
 * A loopback HTTP server that records every request and answers with `answer` (default 200 `{}`):
 * it plays a Google REST API (Cloud Tasks v2, Secret Manager v1) for a real client library.
 */
export async function startRecorder(answer: (req: RecordedRequest) => Reply = () => ({ status: 200, body: {} })) {
  const requests: RecordedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://recorder')
      const raw = Buffer.concat(chunks).toString('utf8')
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: decodeURIComponent(u.pathname),
        query: Object.fromEntries(u.searchParams),
        headers: req.headers,
        json: raw === '' ? null : JSON.parse(raw),
      }
      requests.push(recorded)
      const reply = answer(recorded)
      res.writeHead(reply.status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(reply.body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    hostPort: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A Google API error body as the REST transport returns it (google.rpc.Status in `error`). */
export function googleError(status: number, name: string, message = name): Reply {
  return { status, body: { error: { code: status, message, status: name } } }
}
