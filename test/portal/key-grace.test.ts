import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey, rotateApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import type { StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { formPost, page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * Issue 29, D7/D10: a grace is chosen from a list (none, 1 hour, 24 hours, 7 days), not typed in
 * raw seconds, and a key in its grace period can be revoked at once.
 */
describe('portal: API key grace', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal())
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  it('offers the grace as a list of choices', async () => {
    await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    const shown = (await page(portal, `/portal/connections/${t.apiConnectionId}`, cookie)).body
    // mutation: the number input asks for raw seconds again
    expect(shown).not.toContain('Grace (seconds)')
    expect(shown).toMatch(
      /<select id="[^"]+" name="grace_seconds"><option value="0">None: at once<\/option><option value="3600">1 hour<\/option><option value="86400" selected>24 hours<\/option><option value="604800">7 days<\/option><\/select>/,
    )
  })

  it('a key in its grace period can be revoked now', async () => {
    const old = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    await rotateApiKey(deps, t.account.id, t.apiConnectionId, old.id, 86_400)
    const revokeAction = `/portal/connections/${t.apiConnectionId}/keys/${old.id}/revoke`
    const shown = (await page(portal, `/portal/connections/${t.apiConnectionId}`, cookie)).body
    expect(shown).toContain('(grace period)')
    // mutation: a key with a revoked_at ahead shows no action; its "Revoke now" asks first (issue 29, D7)
    expect(shown).toContain(
      `<form method="get" action="${revokeAction}"><input type="hidden" name="grace_seconds" value="0"><button type="submit" class="danger">Revoke now</button></form>`,
    )
    const revoked = await formPost(portal, revokeAction, cookie, { grace_seconds: '0', confirm: 'yes' })
    expect(revoked.statusCode).toBe(303)
    const stored = (await deps.tenants.listApiKeys(t.account.id)).find((k) => k.id === old.id)!
    expect(Date.parse(stored.revoked_at!)).toBeLessThanOrEqual(Date.now())
    expect((await page(portal, `/portal/connections/${t.apiConnectionId}`, cookie)).body).not.toContain(revokeAction)
  })
})
