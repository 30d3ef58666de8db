import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPortalSecret } from '@lsv/shared/domain/portal/secrets.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { mintLink, pathOf, setCookieOf, signIn, tokenOf } from './support.ts'
import { PORTAL_ORIGIN } from './screens-support.ts'

/**
 * Issue 21, 8d: a sign-in link opened by a browser that is signed in already does not silently
 * replace its session. It shows a page that asks (without using up the link); "Continue" posts
 * the link back, same-origin only, and its 303 replaces the session (the old one ends); "Stay"
 * keeps the session and leaves the link unused.
 */
describe('a sign-in link opened while signed in', () => {
  let h: Harness
  let a: StoredTenant
  let b: StoredTenant
  const used = async (url: string) => (await h.deps.portalAccess.getLink(hashPortalSecret(tokenOf(url))))?.used_at ?? null
  const home = (cookie: string) => h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie } })
  const open = (url: string, cookie: string) => h.portal.inject({ method: 'GET', url: pathOf(url), headers: { cookie } })
  const confirm = (url: string, cookie: string, origin = PORTAL_ORIGIN) =>
    h.portal.inject({ method: 'POST', url: pathOf(url), headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' })

  beforeAll(async () => {
    h = await createHarness()
    a = await createTestTenant(h.deps, { ...ACCOUNT_ONLY, name: 'Alpha Ltd' })
    b = await createTestTenant(h.deps, { ...ACCOUNT_ONLY, name: 'Beta GmbH' })
  })
  afterAll(async () => {
    await a?.cleanup()
    await b?.cleanup()
    await h?.close()
  })

  // mutation: drop the `if (current)` branch of GET /portal/sign-in -> 303 with a new cookie, link used
  it('asks first: 200 page naming both accounts, no cookie set, the link still unused, the session unchanged', async () => {
    const cookieA = await signIn(h.portal, a.accountId)
    const { url } = await mintLink(h.portal, b.accountId)
    const res = await open(url, cookieA)
    expect(res.statusCode).toBe(200)
    expect(res.headers['set-cookie']).toBeUndefined()
    expect(res.headers['cache-control']).toBe('no-store')
    expect(res.headers['referrer-policy']).toBe('no-referrer')
    expect(res.body).toContain('You are signed in to <strong>Alpha Ltd</strong>')
    expect(res.body).toContain(a.publicId)
    expect(res.body).toContain(b.publicId)
    expect(res.body).toContain('Continue as Beta GmbH')
    expect(res.body).toContain(`<form method="post" action="/portal/sign-in?token=${tokenOf(url)}">`)
    expect(res.body).toContain('<a href="/portal/">Stay signed in to Alpha Ltd</a>')
    expect(await used(url)).toBeNull()
    // "Stay": the session is A's still, and the link works later
    expect((await home(cookieA)).body).toContain(a.publicId)
    expect(await used(url)).toBeNull()
  })

  // mutation: drop the isSameOrigin check of POST /portal/sign-in -> 303 and the link is used
  it('"Continue" from another site is refused (403): nothing changes, the link stays unused', async () => {
    const cookieA = await signIn(h.portal, a.accountId)
    const { url } = await mintLink(h.portal, b.accountId)
    const res = await confirm(url, cookieA, 'https://evil.example')
    expect(res.statusCode).toBe(403)
    expect(res.headers['set-cookie']).toBeUndefined()
    expect(await used(url)).toBeNull()
    expect((await home(cookieA)).body).toContain(a.publicId)
  })

  // mutation: drop endPortalSession from POST /portal/sign-in -> the old cookie is still signed in to A
  it('"Continue" (same origin) answers 303 with a session of the link\'s account, ends the old one, and uses the link', async () => {
    const cookieA = await signIn(h.portal, a.accountId)
    const { url } = await mintLink(h.portal, b.accountId)
    const res = await confirm(url, cookieA)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/portal/')
    const set = setCookieOf(res)!
    const cookieB = `${set.name}=${set.value}`
    expect(cookieB).not.toBe(cookieA)
    expect((await home(cookieB)).body).toContain(b.publicId)
    expect((await home(cookieA)).body).toContain('Not signed in')
    expect(await used(url)).not.toBeNull()
    // the link worked once: posting or opening it again is the expired page
    expect((await confirm(url, cookieB)).statusCode).toBe(410)
    expect((await open(url, cookieB)).statusCode).toBe(410)
  })

  // mutation: previewPortalLink ignores used_at -> a used link shows the confirm page (200)
  it('a used or unknown link opened while signed in is the expired page (410), and the session stays', async () => {
    const cookieA = await signIn(h.portal, a.accountId)
    const { url } = await mintLink(h.portal, b.accountId)
    expect((await h.portal.inject({ method: 'GET', url: pathOf(url) })).statusCode).toBe(303)
    const res = await open(url, cookieA)
    expect(res.statusCode).toBe(410)
    expect(res.headers['set-cookie']).toBeUndefined()
    expect((await open('http://localhost:8081/portal/sign-in?token=nope', cookieA)).statusCode).toBe(410)
    expect((await home(cookieA)).body).toContain(a.publicId)
  })

  it('without a session the link still signs in at once (rule 1: 303 with the cookie)', async () => {
    const { url } = await mintLink(h.portal, b.accountId)
    const res = await h.portal.inject({ method: 'GET', url: pathOf(url) })
    expect(res.statusCode).toBe(303)
    expect(setCookieOf(res)).not.toBeNull()
  })

  // the form has no fields: a body is refused before it is read (docs/architecture.md, "Before the caller is known")
  it('"Continue" takes no body: a large one is refused (413) and the link stays unused', async () => {
    const cookieA = await signIn(h.portal, a.accountId)
    const { url } = await mintLink(h.portal, b.accountId)
    const res = await h.portal.inject({
      method: 'POST',
      url: pathOf(url),
      headers: { cookie: cookieA, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'x='.padEnd(64 * 1024, 'x'),
    })
    expect(res.statusCode).toBe(413)
    expect(await used(url)).toBeNull()
  })
})
