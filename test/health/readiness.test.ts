/**
 * /readyz says whether the service can do its work (issue 16, item 9): 503 while starting, while
 * draining and while a dependency is down, 200 otherwise; always from kept state, so a dependency
 * that hangs never makes the probe hang. Over real HTTP (node:http), against the services' apps.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { buildBaseApp, type App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { serviceReadiness } from '@lsv/shared/http/readiness.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { waitFor } from '../conformance/suites/wait.ts'

const logger = pino({ level: 'silent' })
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: unknown; ms: number }> {
  const start = performance.now()
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: agent ?? false }, (res) => {
        let text = ''
        res.on('data', (d) => (text += d))
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), ms: performance.now() - start }))
      })
      .on('error', reject)
  })
}

async function listen(app: App): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** A tenant store whose reads can be made to fail or hang; everything else is the real embedded one. */
function switchableTenants(real: TenantStore) {
  const state = { mode: 'ok' as 'ok' | 'fail' | 'hang' }
  const store = new Proxy(real, {
    get(target, property, receiver) {
      if (property !== 'getAccount') return Reflect.get(target, property, receiver)
      return async (id: string) => {
        if (state.mode === 'fail') throw new Error('store unavailable')
        if (state.mode === 'hang') return new Promise(() => {})
        return target.getAccount(id)
      }
    },
  })
  return { store, state }
}

async function deps(): Promise<PlatformDeps & { cleanup(): Promise<void> }> {
  const d = await createTestDeps()
  cleanups.push(() => d.cleanup())
  return d
}

describe('/readyz of each service', () => {
  const services = { 'edge-ingest': buildEdge, 'portal-api': buildPortal, 'upsert-worker': buildWorker, 'webhook-dispatcher': buildDispatcher }

  it.each(Object.entries(services))('%s: 503 starting before it listens, 200 once listening with its stores and queue up', async (_name, build) => {
    const d = await deps()
    const app = await build(d)
    cleanups.push(() => app.close())
    const before = await app.inject({ method: 'GET', url: '/readyz' })
    expect(before.statusCode).toBe(503)
    expect(before.json()).toEqual({ ok: false, reasons: ['starting'] })
    const port = await listen(app)
    await waitFor(async () => (await get(port, '/readyz')).status === 200, 'ready')
    expect((await get(port, '/readyz')).body).toEqual({ ok: true })
    expect((await get(port, '/healthz')).status).toBe(200)
  })

  it.each(Object.entries(services))('%s: 503 naming the tenant store when it does not answer', async (_name, build) => {
    const d = await deps()
    const tenants = switchableTenants(d.tenants)
    tenants.state.mode = 'fail'
    const app = await build({ ...d, tenants: tenants.store })
    cleanups.push(() => app.close())
    const port = await listen(app)
    await waitFor(async () => !((await get(port, '/readyz')).body as { reasons: string[] }).reasons.includes('starting'), 'first round of checks')
    expect(await get(port, '/readyz')).toMatchObject({ status: 503, body: { ok: false, reasons: ['tenants'] } })
    // liveness is not readiness: the process itself is fine
    expect((await get(port, '/healthz')).status).toBe(200)
  })

  it.each([
    ['edge-ingest', buildEdge],
    ['upsert-worker', buildWorker],
  ] as const)('%s: 503 naming the queue once the embedded queue is closed', async (_name, build) => {
    const d = await deps()
    const app = await build(d)
    cleanups.push(() => app.close())
    await d.queue.close()
    const port = await listen(app)
    await waitFor(async () => !((await get(port, '/readyz')).body as { reasons: string[] }).reasons.includes('starting'), 'first round of checks')
    expect(await get(port, '/readyz')).toMatchObject({ status: 503, body: { ok: false, reasons: ['queue'] } })
  })
})

describe('/readyz from kept state', () => {
  async function appWith(d: PlatformDeps, intervalMs = 50, timeoutMs = 300) {
    const readiness = serviceReadiness(d, ['tenants', 'queue'], { intervalMs, timeoutMs })
    const app = buildBaseApp({ logger, readiness })
    cleanups.push(() => app.close())
    return { app, readiness, port: await listen(app) }
  }

  it('follows a dependency going down and coming back', async () => {
    const d = await deps()
    const tenants = switchableTenants(d.tenants)
    const { port } = await appWith({ ...d, tenants: tenants.store })
    await waitFor(async () => (await get(port, '/readyz')).status === 200, 'ready')
    tenants.state.mode = 'fail'
    await waitFor(async () => (await get(port, '/readyz')).status === 503, 'not ready while the store fails')
    expect((await get(port, '/readyz')).body).toEqual({ ok: false, reasons: ['tenants'] })
    tenants.state.mode = 'ok'
    await waitFor(async () => (await get(port, '/readyz')).status === 200, 'ready again')
  })

  it('answers at once while a dependency hangs, and reports it as down after the check timeout', async () => {
    const d = await deps()
    const tenants = switchableTenants(d.tenants)
    const { port } = await appWith({ ...d, tenants: tenants.store }, 50, 300)
    await waitFor(async () => (await get(port, '/readyz')).status === 200, 'ready')
    tenants.state.mode = 'hang'
    // every answer comes from kept state: a hung check never holds a probe (5 s is the socket's patience here)
    const answers: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 20; i++) {
      const res = await Promise.race([get(port, '/readyz'), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('/readyz hung')), 5000))])
      answers.push(res)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(answers.at(-1)!.status).toBe(503)
    expect((await get(port, '/readyz')).body).toEqual({ ok: false, reasons: ['tenants'] })
  })

  it('503 draining from the moment the app starts closing, while in-flight requests finish', async () => {
    const d = await deps()
    const readiness = serviceReadiness(d, ['tenants'], { intervalMs: 50 })
    const app = buildBaseApp({ logger, readiness })
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    cleanups.push(() => release())
    app.get('/slow', async () => {
      await gate
      return { done: true }
    })
    cleanups.push(() => app.close())
    const port = await listen(app)
    await waitFor(async () => (await get(port, '/readyz')).status === 200, 'ready')
    const inFlight = get(port, '/slow')
    await new Promise((r) => setTimeout(r, 100))
    const closing = app.close()
    await waitFor(() => readiness.report().reasons.includes('draining'), 'draining')
    expect(readiness.report()).toEqual({ ready: false, reasons: ['draining'] })
    // over HTTP a draining service is no longer ready: 503, or no new connection at all
    const probe = await get(port, '/readyz').catch((err: NodeJS.ErrnoException) => ({ status: err.code }))
    expect([503, 'ECONNREFUSED']).toContain(probe.status)
    release()
    expect((await inFlight).status).toBe(200)
    await closing
  })
})
