import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSetCookie } from 'cookie'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { mintLink, pathOf, signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'

const DASHBOARD = 'https://dashboard.example'
const SECOND = 'https://app.saas.example:8443'

/**
 * Issue 22, job 9: an account's `portal_frame_ancestors` (docs/portal.md, "Embedding"). Its screens
 * may be framed by the listed origins and its sign-in sets a cookie a third-party frame can use;
 * every other account's screens stay unframable, and state changes stay same-origin only.
 */
describe('portal embedding: frame-ancestors per account', () => {
  let h: Harness
  let tenants: ManagedTenant[] = []
  let embeddable = ''
  let plain = ''
  const patch = (accountId: string, body: unknown) =>
    h.portal.inject({
      method: 'PATCH',
      url: `${ADMIN}/${accountId}`,
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })

  beforeAll(async () => {
    h = await createHarness()
    tenants = [
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY),
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY),
    ]
    embeddable = tenants[0]!.accountId
    plain = tenants[1]!.accountId
    const set = await patch(embeddable, { portal_frame_ancestors: [DASHBOARD, SECOND] })
    expect(set.statusCode, set.body).toBe(200)
    expect(set.json().portal_frame_ancestors).toEqual([DASHBOARD, SECOND])
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
  })

  // mutation: sendScreen keeps the fixed policy (frame-ancestors 'none', X-Frame-Options DENY) ->
  // the embeddable account's screens name no origin; mutation: the list is used for every account
  // -> the plain account's screens name the dashboard
  it("the account's screens name 'self' and its origins and drop X-Frame-Options; another account's stay 'none' + DENY", async () => {
    const [mine, theirs] = [await signIn(h.portal, embeddable), await signIn(h.portal, plain)]
    for (const url of ['/portal/', '/portal/settings', '/portal/no-such-screen']) {
      const framed = await page(h.portal, url, mine)
      expect(framed.headers['content-security-policy'], url).toContain(`frame-ancestors 'self' ${DASHBOARD} ${SECOND};`)
      expect(framed.headers['x-frame-options'], url).toBeUndefined()
      const other = await page(h.portal, url, theirs)
      expect(other.headers['content-security-policy'], url).toContain("frame-ancestors 'none';")
      expect(other.headers['x-frame-options'], url).toBe('DENY')
    }
    // the settings screen shows the list read-only (mutation: the section dropped -> no origin shown)
    const settings = await page(h.portal, '/portal/settings', mine)
    expect(settings.body).toContain(`<li><code>${DASHBOARD}</code></li><li><code>${SECOND}</code></li>`)
    expect((await page(h.portal, '/portal/settings', theirs)).body).toContain('No other site may show this portal inside its pages.')
    // signed out, no account is known: never framable
    const signedOut = await h.portal.inject({ method: 'GET', url: '/portal/' })
    expect(signedOut.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(signedOut.headers['x-frame-options']).toBe('DENY')
  })

  // mutation: startSession ignores the account (always Lax) -> a dashboard's iframe never sends
  // the cookie; mutation: Lax for the plain account replaced by None -> the plain cookie changes
  it('sign-in sets SameSite=None; Secure; Partitioned for the embeddable account only; sign-out clears the same cookie', async () => {
    const framed = await h.portal.inject({ method: 'GET', url: pathOf((await mintLink(h.portal, embeddable)).url) })
    expect(framed.statusCode).toBe(303)
    const raw = String(framed.headers['set-cookie'])
    expect(raw).toMatch(/^lsv_portal=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; Secure; Partitioned; SameSite=None$/)
    const other = await h.portal.inject({ method: 'GET', url: pathOf((await mintLink(h.portal, plain)).url) })
    expect(String(other.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Lax$/)

    const cookie = raw.split(';')[0]!
    const out = await formPost(h.portal, '/portal/sign-out', cookie)
    expect(out.statusCode).toBe(303)
    expect(parseSetCookie(String(out.headers['set-cookie']))).toMatchObject({
      name: 'lsv_portal',
      value: '',
      maxAge: 0,
      partitioned: true,
      sameSite: 'none',
      secure: true,
    })
  })

  // mutation: the cookie's None lets the session's account skip rule 5 -> the dashboard's form post
  // is accepted. The cookie rides on cross-site requests now; the origin check is what refuses them
  it("a state change posted from the embedding site itself is still refused (rule 5): the frame's own forms are the portal's origin", async () => {
    const cookie = await signIn(h.portal, embeddable)
    const fromDashboard = await formPost(h.portal, '/portal/settings/domains', cookie, { domains: 'evil.example' }, DASHBOARD)
    expect(fromDashboard.statusCode).toBe(403)
    expect((await h.portal.inject({ method: 'GET', url: `${ADMIN}/${embeddable}/authorized-domains`, headers: OPERATOR })).json().domains).toEqual([])
  })

  // mutation: checkedFrameAncestors accepts anything the pattern does -> `:443` is stored;
  // mutation: the schema's pattern loosened to any string -> a path, a wildcard, a second directive
  // ("; script-src …") or plain http reach the CSP header
  it('refuses anything but bare lower-case https origins, and [] turns framing off again', async () => {
    for (const bad of [
      'http://dashboard.example',
      'https://dashboard.example/',
      'https://dashboard.example/app',
      'https://*.dashboard.example',
      '*',
      "'self'",
      'https://Dashboard.example',
      'https://dashboard.example:443',
      'https://dashboard.example:99999',
      'https://user@dashboard.example',
      'https://dashboard.example; script-src *',
      'https://dashboard.example https://other.example',
      'https://dashboard.example?x',
      'dashboard.example',
    ]) {
      const res = await patch(plain, { portal_frame_ancestors: [bad] })
      expect(res.statusCode, bad).toBe(400)
      expect(res.json().error, bad).toBe('invalid payload')
    }
    expect((await patch(plain, { portal_frame_ancestors: [DASHBOARD, DASHBOARD] })).statusCode).toBe(400)
    expect((await patch(plain, { portal_frame_ancestors: Array.from({ length: 11 }, (_, i) => `https://s${i}.example`) })).statusCode).toBe(400)
    const account = await h.portal.inject({ method: 'GET', url: `${ADMIN}/${plain}`, headers: OPERATOR })
    expect(account.json().portal_frame_ancestors).toEqual([])

    const other = tenants[1]!
    expect((await patch(other.accountId, { portal_frame_ancestors: ['https://xn--bcher-kva.example:8443'] })).statusCode).toBe(200)
    const off = await patch(other.accountId, { portal_frame_ancestors: [] })
    expect(off.json().portal_frame_ancestors).toEqual([])
    const cookie = await signIn(h.portal, other.accountId)
    expect((await page(h.portal, '/portal/', cookie)).headers['x-frame-options']).toBe('DENY')
  })
})
