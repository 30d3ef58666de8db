import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import type { App } from '@lsv/shared/http/base-app.ts'
import { OPENAPI_FILE } from '@lsv/shared/contract/generated-files.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { throwingDeps } from './throwing-deps.ts'

/**
 * Every operation of the committed OpenAPI document names one server; the app of that host must
 * have the route and the app of the other host must not (a client following the document never
 * sends a call to a host that answers it with 404).
 */
const HOSTS = { '{portal_base_url}': 'portal', '{edge_base_url}': 'edge' } as const
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

interface Operation {
  method: string
  path: string
  url: string
  host: 'portal' | 'edge'
}

const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as { paths: Record<string, Record<string, { servers?: Array<{ url: string }> }>> }
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => {
    const servers = item[method]!.servers ?? []
    if (servers.length !== 1) throw new Error(`${method} ${path}: ${servers.length} servers`)
    return { method: method.toUpperCase(), path, url: path.replace(/\{([^}]+)\}/g, ':$1'), host: HOSTS[servers[0]!.url as keyof typeof HOSTS] }
  }),
)

let deps: ReturnType<typeof throwingDeps>
const apps = {} as Record<'portal' | 'edge', App>

beforeAll(async () => {
  deps = throwingDeps()
  apps.portal = await buildPortal(deps)
  apps.edge = await buildEdge(deps)
  await Promise.all([apps.portal.ready(), apps.edge.ready()])
})
afterAll(async () => {
  await apps.portal?.close()
  await apps.edge?.close()
})

describe('each operation is served by the host the OpenAPI document names', () => {
  it('covers both hosts', () => {
    expect(operations.filter((o) => o.host === 'edge').length).toBe(3)
    expect(operations.filter((o) => o.host === 'portal').length).toBeGreaterThan(20)
  })

  it.each(operations.map((o) => [`${o.method} ${o.path} -> ${o.host}`, o] as const))('%s', async (_name, op) => {
    const other = op.host === 'edge' ? 'portal' : 'edge'
    expect(apps[op.host].hasRoute({ method: op.method as never, url: op.url }), `${op.host} has the route`).toBe(true)
    expect(apps[other].hasRoute({ method: op.method as never, url: op.url }), `${other} has no such route`).toBe(false)
  })

  it('the edge answers GET /api/v1/schema with 404 and the portal with the schema', async () => {
    expect((await apps.edge.inject({ method: 'GET', url: '/api/v1/schema' })).statusCode).toBe(404)
    expect((await apps.portal.inject({ method: 'GET', url: '/api/v1/schema' })).statusCode).toBe(200)
  })
})
