import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { hashPortalSecret } from '@lsv/shared/domain/portal/secrets.ts'
import { createIngestFixture, expectError, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { ADMIN, call, fails, ok } from '../management/harness.ts'
import { mintLink, pathOf, sameOrigin, setCookieOf, signIn } from './support.ts'

const HOUR = 3600_000
const MINUTE = 60_000

/** management-api.md, "Portal access", rule 3: when a session ends. */
describe('portal session lifetime', () => {
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
  const start = clock.now()
  let fixture: IngestFixture
  let h: Harness
  const accountId = () => fixture.t.account.id
  const home = (cookie: string) => h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie } })
  const signedIn = async (cookie: string) => {
    const res = await home(cookie)
    expect(res.statusCode).toBe(200)
    return res.body.includes(`<code>${fixture.t.publicId}</code>`)
  }
  /** a state-changing request the session is accepted on (contract 4.2): 401 once it has ended */
  const mint = (cookie: string) =>
    h.portal.inject({
      method: 'POST',
      url: '/api/contacts/links',
      headers: sameOrigin(cookie),
      payload: { destinationUrl: 'https://example.com/', source: 'nope', externalId: 'nope' },
    })
  const storedSession = (cookie: string) => h.deps.portalAccess.getSession(hashPortalSecret(cookie.split('=')[1]!))

  beforeAll(async () => {
    fixture = await createIngestFixture({ clock })
    h = fixture.h
  })
  beforeEach(() => clock.set(start))
  afterAll(async () => {
    await fixture?.close()
  })

  it('the landing page names the signed-in account and offers sign-out; without a session it says so', async () => {
    const cookie = await signIn(h.portal, accountId())
    const page = await home(cookie)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain(`Signed in to <strong>test tenant</strong> (account <code>${fixture.t.publicId}</code>)`)
    expect(page.body).toContain('<form method="post" action="/portal/sign-out">')
    const none = await h.portal.inject({ method: 'GET', url: '/portal/' })
    expect(none.body).toContain('Not signed in')
    expect(none.headers['set-cookie']).toBeUndefined()
  })

  it('ends after 12 hours without use (the idle clock restarts at each use)', async () => {
    const cookie = await signIn(h.portal, accountId())
    clock.advance(12 * HOUR - 1)
    expect(await signedIn(cookie)).toBe(true)
    // used just now: another 12 hours from here
    clock.advance(12 * HOUR - 1)
    expect(await signedIn(cookie)).toBe(true)
    clock.advance(12 * HOUR)
    expect(await signedIn(cookie)).toBe(false)
    expectError(await mint(cookie), 401, 'unauthorized')
    // gone for good, and its cookie is removed by the page
    expect(await storedSession(cookie)).toBeNull()
    clock.advance(-HOUR)
    const res = await home(cookie)
    expect(res.body).toContain('Not signed in')
    expect(setCookieOf(res)).toMatchObject({ name: 'lsv_portal', value: '', maxAge: 0 })
  })

  it('ends 7 days after it began, however often it is used', async () => {
    const cookie = await signIn(h.portal, accountId())
    for (let elapsed = 0; elapsed + 11 * HOUR < 7 * 24 * HOUR; elapsed += 11 * HOUR) {
      clock.advance(11 * HOUR)
      expect(await signedIn(cookie)).toBe(true)
    }
    clock.set(start + 7 * 24 * HOUR - 1)
    expect(await signedIn(cookie)).toBe(true)
    clock.set(start + 7 * 24 * HOUR)
    expect(await signedIn(cookie)).toBe(false)
    expectError(await mint(cookie), 401, 'unauthorized')
  })

  it('writes last_used_at at most once a minute', async () => {
    const cookie = await signIn(h.portal, accountId())
    const began = (await storedSession(cookie))!.last_used_at
    clock.advance(MINUTE - 1)
    expect(await signedIn(cookie)).toBe(true)
    expect((await storedSession(cookie))!.last_used_at).toBe(began)
    clock.advance(1)
    expect(await signedIn(cookie)).toBe(true)
    expect((await storedSession(cookie))!.last_used_at).toBe(new Date(clock.now()).toISOString())
  })

  it('sign-out (same-origin POST) ends the session and clears the cookie; a cross-origin one changes nothing', async () => {
    const cookie = await signIn(h.portal, accountId())
    const signOut = (headers: Record<string, string>) => h.portal.inject({ method: 'POST', url: '/portal/sign-out', headers: { cookie, ...headers } })

    for (const headers of [{}, { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'null' }] as Array<Record<string, string>>) {
      const refused = await signOut(headers)
      expect(refused.statusCode).toBe(403)
      expect(refused.headers['set-cookie']).toBeUndefined()
      expect(await signedIn(cookie)).toBe(true)
    }
    // what a browser sends for the page's form: an empty urlencoded body
    const res = await signOut({ origin: 'http://localhost:8081', 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/portal/')
    expect(setCookieOf(res)).toMatchObject({ name: 'lsv_portal', value: '', maxAge: 0, path: '/', httpOnly: true })
    expect(await signedIn(cookie)).toBe(false)
    expectError(await mint(cookie), 401, 'unauthorized')
    // Sec-Fetch-Site: same-origin is enough too
    const other = await signIn(h.portal, accountId())
    expect((await h.portal.inject({ method: 'POST', url: '/portal/sign-out', headers: { cookie: other, 'sec-fetch-site': 'same-origin' } })).statusCode).toBe(
      303,
    )
    expect(await signedIn(other)).toBe(false)
  })

  it('the operator ends every session of the account at once (204); links minted before stop working; others are untouched', async () => {
    const [a1, a2] = [await signIn(h.portal, accountId()), await signIn(h.portal, accountId())]
    const pending = await mintLink(h.portal, accountId())
    const b = await signIn(h.portal, fixture.other.account.id)

    expect(await fails(h.portal, 'DELETE', `${ADMIN}/${accountId()}/portal-sessions`, undefined, {})).toEqual({
      status: 401,
      body: { ok: false, error: 'unauthorized' },
    })
    expect(await signedIn(a1)).toBe(true)
    const res = await call(h.portal, 'DELETE', `${ADMIN}/${accountId()}/portal-sessions`)
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    for (const cookie of [a1, a2]) {
      expectError(await mint(cookie), 401, 'unauthorized')
      expect(await signedIn(cookie)).toBe(false)
    }
    const followed = await h.portal.inject({ method: 'GET', url: pathOf(pending.url) })
    expect(followed.statusCode).toBe(410)
    // the other account's session still works; a new link for the account works
    expect((await h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie: b } })).body).toContain(fixture.other.publicId)
    expect(await signedIn(await signIn(h.portal, accountId()))).toBe(true)
    expect(await fails(h.portal, 'DELETE', `${ADMIN}/00000000-0000-4000-8000-000000000000/portal-sessions`)).toEqual({
      status: 404,
      body: { ok: false, error: 'not found' },
    })
  })

  it('never outlives a deactivated account: deactivation ends it, and reactivation revives none', async () => {
    const t = await createTestTenant(h.deps)
    try {
      const cookie = await signIn(h.portal, t.account.id)
      const pending = await mintLink(h.portal, t.account.id)
      await ok(h.portal, 200, 'PATCH', `${ADMIN}/${t.account.id}`, { active: false })
      // no request while the account is inactive: the deactivation itself ended the session
      await ok(h.portal, 200, 'PATCH', `${ADMIN}/${t.account.id}`, { active: true })
      expectError(await mint(cookie), 401, 'unauthorized')
      expect((await h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie } })).body).toContain('Not signed in')
      expect((await h.portal.inject({ method: 'GET', url: pathOf(pending.url) })).statusCode).toBe(410)
    } finally {
      await t.cleanup()
    }
  })

  it("an account made inactive behind the API's back: its session stops at the next request and stays ended", async () => {
    const t = await createTestTenant(h.deps)
    try {
      const cookie = await signIn(h.portal, t.account.id)
      const pending = await mintLink(h.portal, t.account.id)
      await h.deps.tenants.updateAccount(t.account.id, { active: false })
      expectError(await mint(cookie), 401, 'unauthorized')
      // an inactive account's link starts nothing
      expect((await h.portal.inject({ method: 'GET', url: pathOf(pending.url) })).statusCode).toBe(410)
      await h.deps.tenants.updateAccount(t.account.id, { active: true })
      expectError(await mint(cookie), 401, 'unauthorized')
    } finally {
      await t.cleanup()
    }
  })
})
