import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PlatformDeps } from '../../shared/src/ports/deps.ts'
import type { TaskScheduler } from '../../shared/src/ports/task-scheduler.ts'
import { generateSigningSecret } from '../../shared/src/domain/webhooks/signing.ts'

/** A scheduler that keeps what is enqueued and runs nothing: the bench runs the payloads itself. */
export function capturingTasks(): TaskScheduler & { taken(): Buffer[] } {
  let payloads: Buffer[] = []
  return {
    ensureQueue: async () => {},
    enqueue: async (task) => {
      payloads.push(task.payload)
    },
    start: async () => ({ close: async () => {} }),
    close: async () => {},
    taken() {
      const out = payloads
      payloads = []
      return out
    },
  }
}

/** An active V2 integration of `accountId` posting to `url`, with one signing secret; through the tenant store of `deps`. */
export async function makeBenchIntegration(
  deps: Pick<PlatformDeps, 'tenants'>,
  accountId: string,
  url: string,
  now: string,
): Promise<{ integrationId: string; secret: string }> {
  const secret = generateSigningSecret()
  const integrationId = `int_bench_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`
  await deps.tenants.createIntegration({
    id: integrationId,
    account_id: accountId,
    url,
    payload_version: 2,
    tiers: { contact_handles: true, sensitive_traits: false },
    active: true,
    disabled_reason: null,
    signing_secrets: [{ secret, created_at: now, expires_at: null }],
    created_at: now,
    updated_at: now,
  })
  return { integrationId, secret }
}

/** Runs `fn` on every item, `inFlight` at a time, in order of start (a rejection rejects the whole). */
export async function eachInFlight<T>(items: readonly T[], inFlight: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length) await fn(items[next++]!)
    }),
  )
}

/** A loopback webhook receiver answering 200 `ok` to every request, keeping connections alive; counts the connections it accepted. */
export async function startBenchReceiver(): Promise<{ origin: string; url: string; connections(): number; close(): void }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'))
  })
  server.keepAliveTimeout = 30_000
  let connections = 0
  server.on('connection', () => connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    url: `${origin}/hook`,
    connections: () => connections,
    close() {
      server.closeAllConnections()
      server.close()
    },
  }
}
