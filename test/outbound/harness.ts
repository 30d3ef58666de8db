import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'

export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

export interface Answer {
  status: number
  headers?: Record<string, string>
  body?: string
}

/** A local webhook receiver on 127.0.0.1:0 whose answers the test scripts. */
export async function startReceiver(answer: (req: ReceivedRequest, n: number) => Answer = () => ({ status: 200, body: 'ok' })) {
  const requests: ReceivedRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: ReceivedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      requests.push(r)
      const a = answer(r, requests.length)
      res.writeHead(a.status, a.headers ?? {})
      res.end(a.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hooks/lsv`,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

type RunDue = (handler?: (payload: Buffer, meta: unknown) => Promise<void>) => Promise<number | undefined>

/**
 * Runs every due task of the embedded scheduler through the dispatcher's delivery handler,
 * repeatedly, until a pass runs nothing (a task may schedule an immediately due one).
 */
export async function drainDueTasks(deps: PlatformDeps): Promise<void> {
  const handler = createDeliveryTaskHandler(deps, () => 0.5)
  const tasks = deps.tasks as unknown as { runDue?: RunDue; __outboundStarted?: boolean }
  if (typeof tasks.runDue !== 'function') throw new Error('the embedded task scheduler has no runDue()')
  if (tasks.runDue.length === 0 && !tasks.__outboundStarted) {
    await deps.tasks.start(async (payload) => {
      await handler(payload)
    })
    tasks.__outboundStarted = true
  }
  for (let i = 0; i < 20; i++) {
    const ran = await tasks.runDue(async (payload) => {
      await handler(payload)
    })
    if (typeof ran === 'number' && ran === 0) return
    if (ran === undefined && i > 2) return
  }
}
