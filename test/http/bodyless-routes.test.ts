/**
 * Issue 28, item 4: "No request reads a body before something has decided it needs one". fastify
 * read and JSON-parsed the body of every DELETE, up to the 8 MiB body limit, after the operator's
 * check and before the handler, although no DELETE route takes a body. Now a route whose method
 * takes no body (DELETE without a body schema) is handled without reading one, for every service
 * (shared/src/http/bodyless-routes.ts, an onRoute hook of the base app).
 *
 * Every DELETE route of every service, as fastify's own route table lists it, is sent by an
 * authenticated operator a request declaring an 8 MiB JSON body and sending none of it: each
 * must be answered anyway (a route that waited for the body would not answer), and a real one
 * (revoking the tenant's key) must do its work: 204, and the key is refused afterwards.
 * Mutation: ignoreBodiesOfBodylessRoutes not called in buildBaseApp → no answer, every route fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { edgeIngest } from '../../services/edge-ingest/src/service.ts'
import { portalApi } from '../../services/portal-api/src/service.ts'
import { upsertWorker } from '../../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../../services/webhook-dispatcher/src/service.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { TEST_OPERATOR_TOKEN } from '../helpers/test-secrets.ts'
import { recordingQueue } from '../ingest/support/harness.ts'
import { firstResponse, rawConnect } from './support/raw.ts'

const DECLARED = 8 * 1024 * 1024
/** a bound on waiting for an answer, never a measurement */
const ANSWER_WAIT_MS = 10_000
const SERVICES: ServiceDefinition[] = [edgeIngest, portalApi, upsertWorker, webhookDispatcher]

describe('routes that take no body (issue 28, item 4)', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let t: StoredTenant
  const walked: Array<{ service: string; app: App; port: number; deletes: string[] }> = []

  beforeAll(async () => {
    deps = await createTestDeps({ queue: recordingQueue().queue })
    t = await createTestTenant(deps)
    for (const service of SERVICES) {
      const deletes: string[] = []
      const app = await service.build(deps, {
        beforeRoutes: async (a) => {
          a.addHook('onRoute', (route) => {
            if ([route.method].flat().includes('DELETE')) deletes.push(route.url)
          })
        },
      })
      await app.listen({ port: 0, host: '127.0.0.1' })
      walked.push({ service: service.name, app, port: (app.server.address() as AddressInfo).port, deletes })
    }
  })
  afterAll(async () => {
    for (const w of walked) await w.app.close()
    await t?.cleanup()
    await deps?.cleanup()
  })

  /** an operator's DELETE declaring an 8 MiB JSON body, none of it sent: the answer, or null when none came */
  async function deleteDeclaringBody(port: number, path: string) {
    const c = await rawConnect(port)
    await c.write(
      `DELETE ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TEST_OPERATOR_TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${DECLARED}\r\n\r\n`,
    )
    for (let waited = 0; waited < ANSWER_WAIT_MS && firstResponse(c.received()) === null && !c.socket.destroyed; waited += 20) {
      await new Promise((r) => setTimeout(r, 20))
    }
    const answer = firstResponse(c.received())
    c.socket.destroy()
    return answer
  }

  it('answers every DELETE route of every service without reading the body it declares', async () => {
    const all = walked.flatMap((w) => w.deletes.map((url) => ({ w, url })))
    // the management API's deletions at least: keys, locations, integrations, portal sessions
    expect(all.length).toBeGreaterThanOrEqual(4)
    for (const { w, url } of all) {
      const path = url.replace(/:accountId/g, t.accountId).replace(/:[A-Za-z_]+/g, 'x-unknown')
      const answer = await deleteDeclaringBody(w.port, path)
      expect({ route: `${w.service} DELETE ${url}`, answered: answer !== null }).toEqual({ route: `${w.service} DELETE ${url}`, answered: true })
      expect(answer!.status, `${w.service} DELETE ${url}`).toBeLessThan(500)
    }
  })

  it('does the work of a real deletion: the key is revoked (204) and refused afterwards', async () => {
    const portal = walked.find((w) => w.service === portalApi.name)!
    const answer = await deleteDeclaringBody(portal.port, `/api/v1/admin/accounts/${t.accountId}/connections/${t.apiConnectionId}/keys/${t.keyId}`)
    expect(answer?.status).toBe(204)
    const edge = walked.find((w) => w.service === edgeIngest.name)!
    const c = await rawConnect(edge.port)
    const payload = JSON.stringify({ contacts: [{ external_id: 'x' }] })
    await c.write(
      `POST /v1/contacts HTTP/1.1\r\nhost: ${t.host}\r\nauthorization: Bearer ${t.key}\r\ncontent-type: application/json\r\ncontent-length: ${payload.length}\r\nconnection: close\r\n\r\n${payload}`,
    )
    const { text } = await c.closed
    expect(firstResponse(text)?.status).toBe(401)
  })
})
