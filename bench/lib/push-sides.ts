import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { BENCH_PEPPER } from './bench-tenant.ts'

/**
 * What the small-push benches share (bench:push-ab, bench:push-split; bench:ingest part A's
 * settings): the sides autocannon drives, the bare route, the one-record body and a run.
 */

/** part A's concurrency */
export const PUSH_CONNECTIONS = 100

/** part A's small push: one record */
export const SMALL_PUSH_BODY = JSON.stringify({ contacts: [{ external_id: 'one', email: 'one@example.com', first_name: 'One' }] })

/** a server a run pushes to */
export interface PushSide {
  url: string
  headers: Record<string, string>
  close(): Promise<void>
}

/** the environment of a bench platform on the embedded adapters in `dir` (loadConfig's input) */
export function embeddedBenchEnv(dir: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATA_DIR: dir,
    STORE_BACKEND: 'embedded',
    QUEUE_BACKEND: 'embedded',
    KEY_PEPPER: BENCH_PEPPER,
    OPERATOR_TOKEN: 'bench',
  }
}

/** the parts of a fastify app a side needs (an edge built from another checkout has its own fastify) */
interface ListeningApp {
  listen(options: { port: number; host: string }): Promise<unknown>
  readonly server: { address(): unknown }
  close(): Promise<unknown>
}

/** An edge app as a side: listening on a free loopback port, pushed to as the tenant whose edge Host and key are given; `cleanup` after the app's close. */
export async function edgeAsSide(app: ListeningApp, tenant: { host: string; key: string }, cleanup: () => Promise<void>): Promise<PushSide> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/contacts`,
    headers: { host: tenant.host, authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    async close() {
      await app.close()
      await cleanup()
    },
  }
}

/** A bare fastify app: the default JSON parser (reads and parses), 202 with a constant body: part A's control. */
export function bareApp() {
  const app = Fastify({ bodyLimit: 8 * 1024 * 1024 })
  app.post('/v1/contacts', async (request, reply) => {
    const contacts = (request.body as { contacts?: unknown[] }).contacts
    return reply.code(202).send({ ok: true, accepted: contacts?.length ?? 0, queued: true })
  })
  return app
}

/** the bare app, listening on a free loopback port */
export async function bareSide(): Promise<PushSide> {
  const app = bareApp()
  await app.listen({ port: 0, host: '127.0.0.1' })
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/contacts`,
    headers: { 'content-type': 'application/json' },
    close: async () => {
      await app.close()
    },
  }
}

// autocannon is CommonJS without type declarations
const autocannon = createRequire(import.meta.url)('autocannon') as (options: object) => Promise<{
  requests: { average: number; total: number }
  non2xx: number
  errors: number
}>

/** small pushes to `side` for `seconds` at PUSH_CONNECTIONS: CPU µs per request (this process: the servers and autocannon) and req/s */
export async function runSmallPushes(side: PushSide, seconds: number): Promise<{ cpu: number; rps: number }> {
  const start = process.cpuUsage()
  const result = await autocannon({
    url: side.url,
    method: 'POST',
    headers: side.headers,
    body: SMALL_PUSH_BODY,
    connections: PUSH_CONNECTIONS,
    duration: seconds,
  })
  const used = process.cpuUsage(start)
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${side.url}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { cpu: (used.user + used.system) / Math.max(1, result.requests.total), rps: result.requests.average }
}
