import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'

/**
 * A partner CRM location's token rotated from the Inbound connections screen, as the partner CRM
 * meets it on the edge: the new tokenized URL pushes at once, the old token keeps working for the
 * grace chosen on the form and answers 401 from the instant the grace ends (the clock is moved,
 * as the management API's grace tests do).
 */
describe('portal screen: a partner CRM location token rotated with a grace', () => {
  const clock = new ManualClock(Date.now())
  let h: Harness
  let tenant: ManagedTenant | undefined
  let accountId = ''
  let host = ''
  let cookie = ''

  /** the tokenized URL in the page's secret box (shown once) */
  const shownUrl = (html: string): URL => {
    const m = /<div class="secret"[\s\S]*?<code id="[^"]+">([^<]+)<\/code>/.exec(html)
    expect(m, 'a tokenized URL shown once').not.toBeNull()
    return new URL(m![1]!.replace(/&amp;/g, '&'))
  }
  const push = (url: URL, contactId: string) =>
    h.edge.inject({
      method: 'POST',
      url: `${url.pathname}${url.search}`,
      headers: { host, 'content-type': 'application/json' },
      payload: JSON.stringify({ contactId, locationId: 'loc-r', firstName: 'Rota' }),
    })

  beforeAll(async () => {
    h = await createHarness({ clock })
    // a bare account through the management API: the screen adds the partner CRM connection
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
    accountId = tenant.accountId
    host = tenant.host
    cookie = await signIn(h.portal, accountId)
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await h?.close()
  })

  it('the new URL pushes at once; the old token works until the grace ends, then 401', async () => {
    const connection = await formPost(h.portal, '/portal/connections', cookie, { type: 'partnercrm' })
    expect(connection.statusCode).toBe(303)
    const connectionId = /\/portal\/connections\/([^?]+)/.exec(connection.headers.location ?? '')![1]!
    const added = await formPost(h.portal, `/portal/connections/${connectionId}/locations`, cookie, { location_id: 'loc-r' })
    const oldUrl = shownUrl((await followReveal(h.portal, added, cookie)).body)
    expect((await push(oldUrl, 'r-1')).statusCode).toBe(202)

    const rotated = await formPost(h.portal, `/portal/connections/${connectionId}/locations/loc-r/rotate`, cookie, { grace_seconds: '600' })
    const rotatedShown = (await followReveal(h.portal, rotated, cookie)).body
    const newUrl = shownUrl(rotatedShown)
    expect(newUrl.pathname).toBe(oldUrl.pathname)
    expect(newUrl.searchParams.get('token')).not.toBe(oldUrl.searchParams.get('token'))
    const graceEnd = new Date(clock.now() + 600_000).toISOString()
    expect(rotatedShown).toContain(`the old token works until ${graceEnd}`)
    // shown once: the page seen again lists the location without either token
    const again = (await page(h.portal, `/portal/connections/${connectionId}`, cookie)).body
    expect(again).toContain('loc-r')
    for (const u of [oldUrl, newUrl]) expect(again).not.toContain(u.searchParams.get('token')!)

    expect((await push(newUrl, 'r-2')).statusCode).toBe(202)
    expect((await push(oldUrl, 'r-3')).statusCode).toBe(202)
    // the header form of the old token works too during the grace
    const byHeader = await h.edge.inject({
      method: 'POST',
      url: oldUrl.pathname,
      headers: { host, 'content-type': 'application/json', 'x-webhook-token': oldUrl.searchParams.get('token')! },
      payload: JSON.stringify({ contactId: 'r-4', locationId: 'loc-r' }),
    })
    expect(byHeader.statusCode).toBe(202)

    clock.advance(599_000)
    expect((await push(oldUrl, 'r-5')).statusCode).toBe(202)
    clock.advance(1_000)
    const late = await push(oldUrl, 'r-6')
    expect(late.statusCode, late.body).toBe(401)
    expect((await push(newUrl, 'r-7')).statusCode).toBe(202)

    const entry = (await listAudit(h.deps, accountId, { limit: 10 })).data.find((e) => e.action === 'location.rotate_token')!
    expect(entry).toMatchObject({ target: { connection_id: connectionId, location_id: 'loc-r' }, details: { previous_until: graceEnd } })
    expect(JSON.stringify(entry)).not.toContain(newUrl.searchParams.get('token')!)
  })

  it('grace 0 stops the old token at once', async () => {
    const connectionId = (await h.deps.tenants.listConnections(accountId)).find((c) => c.type === 'partnercrm')!.id
    const rotateNow = async () =>
      shownUrl(
        (
          await followReveal(
            h.portal,
            await formPost(h.portal, `/portal/connections/${connectionId}/locations/loc-r/rotate`, cookie, { grace_seconds: '0' }),
            cookie,
          )
        ).body,
      )
    const before = await rotateNow()
    const after = await rotateNow()
    expect((await push(before, 'r-8')).statusCode).toBe(401)
    expect((await push(after, 'r-9')).statusCode).toBe(202)
  })
})
