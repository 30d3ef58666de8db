import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSetCookie } from 'cookie'
import { safeReturnPath } from '../../services/portal-api/src/portal/return-path.ts'
import { createIngestFixture, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import { mintLink, pathOf } from './support.ts'

/**
 * Issue 22, job 9: a signed-out GET of a portal screen remembers its path; the next sign-in in
 * that browser answers 303 to it (management-api.md, "Portal access", rule 1) instead of the home.
 * Only same-origin /portal/ paths are ever remembered or followed: no open redirect.
 */
describe('coming back to the page asked for after signing in', () => {
  let fixture: IngestFixture
  let h: Harness
  beforeAll(async () => {
    fixture = await createIngestFixture()
    h = fixture.h
  })
  afterAll(async () => {
    await fixture?.close()
  })

  const cookiesOf = (res: { headers: Record<string, unknown> }) => {
    const raw = res.headers['set-cookie']
    return (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw as string]).map((c) => parseSetCookie(c))
  }
  /** Follows a fresh sign-in link of the fixture's account with the given Cookie header. */
  const signInWith = async (cookie?: string) => {
    const { url } = await mintLink(h.portal, fixture.t.account.id)
    return h.portal.inject({ method: 'GET', url: pathOf(url), headers: cookie === undefined ? {} : { cookie } })
  }

  // mutations: the guard sets no cookie (session.ts) -> no lsv_portal_next; access.ts redirects
  // to HOME_PATH whatever the cookie -> location /portal/ instead of the page
  it('a signed-out GET remembers the page; the next sign-in lands on it, once; the page then opens', async () => {
    const target = `/portal/connections/${encodeURIComponent(fixture.t.apiConnectionId)}?flash=x`
    const signedOut = await h.portal.inject({ method: 'GET', url: target })
    expect(signedOut.statusCode).toBe(303)
    expect(signedOut.headers.location).toBe('/portal/')
    const [remembered] = cookiesOf(signedOut)
    expect(remembered).toMatchObject({ name: 'lsv_portal_next', value: target, httpOnly: true, sameSite: 'lax', path: '/', maxAge: 900 })

    const res = await signInWith(`lsv_portal_next=${encodeURIComponent(target)}`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(target)
    const set = cookiesOf(res)
    const session = set.find((c) => c.name === 'lsv_portal')!
    // used once: the same answer removes it
    expect(set.find((c) => c.name === 'lsv_portal_next')).toMatchObject({ value: '', maxAge: 0 })

    const opened = await h.portal.inject({ method: 'GET', url: target, headers: { cookie: `lsv_portal=${session.value}` } })
    expect(opened.statusCode).toBe(200)
    expect(opened.body).toContain(fixture.t.apiConnectionId)
  })

  // issue 29, D4: a contact's links.portal deep link (/contacts/{id}, outside /portal/) survives
  // sign-in. mutation: return-path.ts accepting /portal/ only -> no cookie, sign-in lands on the home
  it("a signed-out GET of a contact's links.portal URL lands on that contact after sign-in", async () => {
    const target = '/contacts/c_deep_link_1'
    const signedOut = await h.portal.inject({ method: 'GET', url: target })
    expect(signedOut.statusCode).toBe(303)
    const [remembered] = cookiesOf(signedOut)
    expect(remembered).toMatchObject({ name: 'lsv_portal_next', value: target })
    const res = await signInWith(`lsv_portal_next=${encodeURIComponent(target)}`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe(target)
  })

  it('without a remembered page, sign-in lands on the home as before; a HEAD or a form post remembers nothing', async () => {
    const plain = await signInWith()
    expect(plain.headers.location).toBe('/portal/')
    expect(cookiesOf(plain).map((c) => c.name)).toEqual(['lsv_portal'])
    const head = await h.portal.inject({ method: 'HEAD', url: '/portal/connections' })
    expect(cookiesOf(head).map((c) => c.name)).not.toContain('lsv_portal_next')
    const post = await h.portal.inject({ method: 'POST', url: '/portal/connections', headers: { origin: 'http://localhost:8081' } })
    expect(post.statusCode).toBe(401)
    expect(cookiesOf(post).map((c) => c.name)).not.toContain('lsv_portal_next')
  })

  const HOSTILE = [
    '//evil.example',
    '//evil.example/portal/',
    '/\\evil.example',
    '/portal/\\evil.example',
    '\\\\evil.example',
    'https://evil.example/portal/',
    'http://localhost:8081/portal/connections',
    'javascript:alert(1)',
    '/%2F%2Fevil.example',
    '%2F%2Fevil.example',
    '/portal/../api/v1/schema',
    '/portal/%2e%2e/api/v1/schema',
    '/portal/%2E%2E/%2E%2E/evil',
    '/portal/x#frag',
    '/portal/\tx',
    '/portal/ x',
    '/portal/\r\nSet-Cookie: a=b',
    '/api/v1/schema',
    '/portalx',
    `/portal/${'a'.repeat(2100)}`,
  ]

  // mutation: safeReturnPath = (v) => (v?.startsWith('/') ? v : null) -> //evil.example is followed
  it.each(HOSTILE)('never follows %j', async (value) => {
    expect(safeReturnPath(value)).toBeNull()
    // the cookie value as a client could plant it (the cookie library decodes it)
    const res = await signInWith(`lsv_portal_next=${encodeURIComponent(value)}`)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/portal/')
  })

  it('a raw (not percent-encoded) hostile cookie is not followed either', async () => {
    for (const raw of ['//evil.example', '/\\evil.example', '%2F%2Fevil.example', '%2F%5Cevil.example']) {
      const res = await signInWith(`lsv_portal_next=${raw}`)
      expect(res.headers.location, raw).toBe('/portal/')
    }
  })

  it('keeps ordinary portal paths, queries included', () => {
    for (const ok of [
      '/portal/',
      '/portal/contacts/abc',
      '/portal/connections/c-1?flash=saved',
      '/portal/contacts?q=a%20b&page=2',
      '/portal/%2F%2Fevil.example',
    ]) {
      expect(safeReturnPath(ok), ok).toBe(ok)
    }
  })
})
