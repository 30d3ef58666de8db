import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { join } from 'node:path'
import type { App } from '@lsv/shared/http/base-app.ts'
import { OPENAPI_HOST_FILES } from '@lsv/shared/contract/generated-files.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { HOST_RUNTIME_SCRIPT } from './host-runtime-script.ts'
import { generateTypes, runNode, scratchProject, typeCheck, type Diagnostic } from './toolchain.ts'

/**
 * The per-host OpenAPI documents as orval and hey-api use a document: the base URL from the
 * top-level `servers`, and the credential in every scheme an operation lists (hey-api's
 * `setAuthParams`). Types are generated with openapi-typescript from the committed
 * openapi.portal.json and openapi.edge.json; the consumer fetches the served documents
 * (`?host=portal`, `?host=edge&account=`) from a listening portal and calls the listening apps.
 * The same consumer on the whole document sends both key headers and is answered 401: that is
 * what the per-host documents fix.
 */
describe('clients generated from the per-host documents', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  let portal: App
  let edge: App
  let project: ReturnType<typeof scratchProject>
  let checked: { diagnostics: Diagnostic[]; output: string; code: number }
  let env: Record<string, string>

  beforeAll(async () => {
    project = scratchProject()
    await generateTypes(OPENAPI_HOST_FILES.portal, join(project.dir, 'portal-api.d.ts'))
    await generateTypes(OPENAPI_HOST_FILES.edge, join(project.dir, 'edge-api.d.ts'))
    project.write('consumer.ts', HOST_RUNTIME_SCRIPT)
    checked = await typeCheck(project.dir)

    deps = await createTestDeps()
    tenant = await createTestTenant(deps, { api: { key: { scopes: ['contacts:write', 'contacts:read'] } } })
    portal = await buildPortal(deps)
    edge = await buildEdge(deps)
    const portalUrl = await portal.listen({ host: '127.0.0.1', port: 0 })
    const edgePort = new URL(await edge.listen({ host: '127.0.0.1', port: 0 })).port
    // the deployment's public URLs, as its configuration names them: here, the listening apps
    Object.assign(deps.config, { portalBaseUrl: portalUrl, edgeBaseUrlTemplate: `http://{public_id}.${deps.config.edgeDomain}:${edgePort}` })
    env = {
      PORTAL_URL: portalUrl,
      EDGE_URL: `http://${tenant.host}:${edgePort}`,
      PUBLIC_ID: tenant.publicId,
      API_KEY: tenant.key,
      SOURCE_ID: tenant.webhookConnectionId,
      SOURCE_TOKEN: tenant.sourceToken,
    }
  }, 180_000)

  afterAll(async () => {
    project?.remove()
    await portal?.close()
    await edge?.close()
    await tenant?.cleanup()
    await deps?.cleanup()
  })

  async function run(extra: Record<string, string> = {}) {
    const result = await runNode([join(project.dir, 'consumer.ts')], { ...env, ...extra })
    expect(result.code, result.stderr).toBe(0)
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!)
  }

  it('type-checks the consumer against both generated files', () => {
    expect(checked.diagnostics, checked.output).toEqual([])
  })

  it('each document names its own host as the one top-level server; the calls land there with one credential each', async () => {
    const out = await run()
    expect(out.servers).toEqual({ portal: [env.PORTAL_URL], edge: [`${env.EDGE_URL}`] })
    expect(out.push).toEqual({ status: 202, data: { ok: true, accepted: 1, queued: true } })
    expect(out.sent.push).toEqual({ credentials: ['authorization'], query: '' })
    expect(out.sourcePush).toEqual({ status: 202, data: { ok: true, accepted: 1, queued: true } })
    // the token in its header only: never in the URL, where logs and history keep it
    expect(out.sent.sourcePush).toEqual({ credentials: ['x-webhook-token'], query: '' })
    expect(out.list.status).toBe(200)
    expect(out.sent.list).toEqual({ credentials: ['authorization'], query: '?limit=1' })
  }, 60_000)

  it('the whole document, used the same way, sends both key forms and is answered 401 (why the per-host documents exist)', async () => {
    const out = await run({ DOCUMENT: 'whole' })
    expect(out.sent.push.credentials).toEqual(['authorization', 'x-api-key'])
    expect(out.push.status).toBe(401)
    expect(out.sent.sourcePush.credentials).toEqual(['x-webhook-token', '?token'])
  }, 60_000)

  it('without account, the edge server keeps a public_id variable; an unknown host or a malformed account is a 400', async () => {
    const doc = await (await fetch(`${env.PORTAL_URL}/api/v1/openapi.json?host=edge`)).json()
    expect(doc.servers).toEqual([expect.objectContaining({ url: deps.config.edgeBaseUrlTemplate, variables: { public_id: expect.any(Object) } })])
    expect(Object.keys(doc.paths).sort()).toEqual(['/v1/contacts', '/v1/contacts/partnercrm', '/v1/contacts/{sourceId}'])
    expect((await fetch(`${env.PORTAL_URL}/api/v1/openapi.json?host=worker`)).status).toBe(400)
    expect((await fetch(`${env.PORTAL_URL}/api/v1/openapi.json?host=edge&account=a.b`)).status).toBe(400)
  })
})
