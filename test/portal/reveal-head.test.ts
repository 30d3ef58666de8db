import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost } from './screens-support.ts'
import { followReveal, REVEAL_LOCATION, secretIn } from './reveal-support.ts'

/**
 * Issue 31 (attack, low): a `HEAD` of a reveal page used up its one-time secret, because fastify
 * answers HEAD with the GET route's handler. A link checker, a proxy or a preview that sends HEAD
 * first left the tenant with a page that says "shown once". The reveal page takes GET only.
 */
describe('the one-time reveal page', () => {
  let h: Harness
  let tenant: ManagedTenant
  let cookie = ''

  beforeAll(async () => {
    h = await createHarness()
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
    cookie = await signIn(h.portal, tenant.accountId)
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await h?.close()
  })

  it('a HEAD does not use up the secret: the GET after it still shows it, once', async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'webhook', source: 'forms' })
    const location = String(created.headers.location)
    expect(location).toMatch(REVEAL_LOCATION)
    const head = await h.portal.inject({ method: 'HEAD', url: location, headers: { cookie } })
    expect(head.statusCode).toBe(404)
    const shown = await followReveal(h.portal, created, cookie)
    expect(secretIn(shown.body)).toMatch(/\S{20,}/)
    const again = await h.portal.inject({ method: 'GET', url: location, headers: { cookie } })
    expect(again.statusCode).toBe(410)
  })
})
