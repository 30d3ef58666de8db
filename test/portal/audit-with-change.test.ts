import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { withAuditedChange } from '@lsv/shared/domain/audit/audited-change.ts'
import { createConnection } from '@lsv/shared/domain/tenants/connections.ts'
import type { ConnectionRecord } from '@lsv/shared/model/records.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost } from './screens-support.ts'

/**
 * Issue 21 item 4: a tenant value that looks like a credential (`lst_…`) no longer fails the
 * audit write after the change was saved; the change and its entry are one write (the stores'
 * side: test/conformance/tenant-store-audit.test.ts). Real wiring, the portal as a browser uses it.
 */
describe('portal changes and their audit entries', () => {
  let h: Harness
  let t: ManagedTenant
  let cookie = ''
  const credentialLooking = `lst_${'a'.repeat(24)}`
  const entries = async () => (await h.deps.auditLog.list(t.accountId, { limit: 50 })).data

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
    cookie = await signIn(h.portal, t.accountId)
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('a credential-looking source or field label is saved with its entry, redacted in the entry', async () => {
    // mutation: recordAudit throwing on a secret-looking value (before issue 21) answers 500
    // after the change was saved, with no entry
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', source: credentialLooking })
    expect(created.statusCode, created.body).toBe(303)
    const connections = await h.deps.tenants.listConnections(t.accountId)
    expect(connections.map((c) => c.source)).toContain(credentialLooking)
    const field = await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'plan', label: credentialLooking, type: 'text' })
    expect(field.statusCode, field.body).toBe(303)
    const log = await entries()
    expect(log.find((e) => e.action === 'connection.create')).toMatchObject({ details: { type: 'api', source: '[redacted]' } })
    expect(log.find((e) => e.action === 'custom_field.create')).toMatchObject({ target: { custom_field: 'plan' }, details: { label: '[redacted]' } })
    expect(JSON.stringify(log)).not.toContain(credentialLooking)
  })

  it('through withAuditedChange a domain change fails whole when its entry cannot be built, and records one entry per change', async () => {
    const before = (await h.deps.tenants.listConnections(t.accountId)).length
    const failing = withAuditedChange(h.deps, (_c: ConnectionRecord) => {
      throw new Error('entry failed')
    })
    // mutation: withAuditedChange recording the entry after the call (or dropping WriteOptions)
    // leaves the connection saved
    await expect(createConnection(failing, t.accountId, { type: 'api', source: 'atomic' })).rejects.toThrow('entry failed')
    expect(await h.deps.tenants.listConnections(t.accountId)).toHaveLength(before)
    const count = (await entries()).length
    const ok = withAuditedChange(h.deps, (c: ConnectionRecord) => ({
      account_id: t.accountId,
      actor: 'portal session 000000000000',
      action: 'connection.create',
      target: { connection_id: c.id },
    }))
    const created = await createConnection(ok, t.accountId, { type: 'api', source: 'atomic' })
    const after = await entries()
    expect(after).toHaveLength(count + 1)
    expect(after[0]).toMatchObject({ action: 'connection.create', target: { connection_id: created.id } })
  })
})
