import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../services/portal-api/src/app.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { ADMIN, call, fails, ok } from './harness.ts'

/**
 * The management API's integration lifecycle additions (issue 22 job 5): `name` and
 * `description` on create and update (null clears), and `DELETE …/integrations/{id}` → 204,
 * audited, after which the integration is 404.
 */
describe('management API: integration name, description and delete', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let app: App
  let t: ManagedTenant

  beforeAll(async () => {
    deps = await createTestDeps()
    app = await buildApp(deps)
    t = await createTestTenant({ managementApi: app, deps }, { ...ACCOUNT_ONLY })
  })
  afterAll(async () => {
    await t?.cleanup()
    await app?.close()
    await deps?.cleanup()
  })

  it('creates with a name and a description, updates and clears them; bounds are enforced', async () => {
    const base = `${ADMIN}/${t.accountId}/integrations`
    const created = await ok(app, 201, 'POST', base, { url: 'https://hooks.example.com/m', payload_version: 2, name: 'Billing', description: 'to billing' })
    expect(created).toMatchObject({ name: 'Billing', description: 'to billing', failing: null })
    const updated = await ok(app, 200, 'PATCH', `${base}/${created.id}`, { name: 'Billing v2', description: null })
    // mutation: PATCH ignoring name/description -> 'Billing', 'to billing'
    expect(updated).toMatchObject({ name: 'Billing v2', description: null })
    expect(await ok(app, 200, 'GET', `${base}/${created.id}`)).toMatchObject({ name: 'Billing v2', description: null })
    await fails(app, 'PATCH', `${base}/${created.id}`, { name: 'x'.repeat(101) })
  })

  it('DELETE answers 204, the integration is gone (404 after), the deletion is in the account audit log', async () => {
    const base = `${ADMIN}/${t.accountId}/integrations`
    const created = await ok(app, 201, 'POST', base, { url: 'https://hooks.example.com/gone', payload_version: 2 })
    const res = await call(app, 'DELETE', `${base}/${created.id}`)
    expect(res.statusCode).toBe(204)
    expect((await call(app, 'GET', `${base}/${created.id}`)).statusCode).toBe(404)
    expect((await call(app, 'DELETE', `${base}/${created.id}`)).statusCode).toBe(404)
    const entry = (await listAudit(deps, t.accountId, { limit: 50 })).data.find((e) => e.action === 'integration.deleted')
    expect(entry).toMatchObject({ actor: 'operator', target: { integration_id: created.id }, details: { host: 'hooks.example.com' } })
  })
})
