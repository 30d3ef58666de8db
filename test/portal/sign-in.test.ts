import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { hashPortalSecret } from '@lsv/shared/domain/portal/secrets.ts'
import { createIngestFixture, createHarness, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { ADMIN, OPERATOR, call, fails } from '../management/harness.ts'
import { mintLink, pathOf, setCookieOf, tokenOf } from './support.ts'

/** management-api.md, "Portal access", rules 1 and 2: the link, following it, and its cookie. */
describe('portal sign-in links', () => {
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
  let fixture: IngestFixture
  let h: Harness
  const accountId = () => fixture.t.account.id
  const follow = (url: string, headers: Record<string, string> = {}) => h.portal.inject({ method: 'GET', url: pathOf(url), headers })

  beforeAll(async () => {
    fixture = await createIngestFixture({ clock })
    h = fixture.h
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('mints a link: 201 {url, expires_at}, url absolute on PORTAL_BASE_URL, 900 s by default, only the token hash stored', async () => {
    const res = await call(h.portal, 'POST', `${ADMIN}/${accountId()}/portal-links`, {})
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['expires_at', 'url'])
    expect(body.url).toMatch(/^http:\/\/localhost:8081\/portal\/sign-in\?token=[A-Za-z0-9_-]{43}$/)
    expect(body.expires_at).toBe(new Date(clock.now() + 900_000).toISOString())
    const token = tokenOf(body.url)
    const stored = await h.deps.portalAccess.getLink(hashPortalSecret(token))
    expect(stored).toEqual({
      token_hash: hashPortalSecret(token),
      account_id: accountId(),
      created_at: new Date(clock.now()).toISOString(),
      expires_at: body.expires_at,
      used_at: null,
    })
    expect(JSON.stringify(stored)).not.toContain(token)
    // two links are two tokens
    expect(tokenOf((await mintLink(h.portal, accountId())).url)).not.toBe(token)
  })

  it('takes ttl_seconds 60..3600; anything else is 400 with issues; an empty or absent body is the default', async () => {
    for (const ttl of [60, 3600]) {
      expect((await mintLink(h.portal, accountId(), { ttl_seconds: ttl })).expires_at).toBe(new Date(clock.now() + ttl * 1000).toISOString())
    }
    for (const payload of [{ ttl_seconds: 59 }, { ttl_seconds: 3601 }, { ttl_seconds: 90.5 }, { ttl_seconds: '900' }, { ttl: 900 }]) {
      const res = await fails(h.portal, 'POST', `${ADMIN}/${accountId()}/portal-links`, payload, { ...OPERATOR, 'content-type': 'application/json' })
      expect(res.status).toBe(400)
      expect(res.body.error).toBe('invalid payload')
      expect(res.body.issues!.length).toBeGreaterThan(0)
    }
    const empty = await h.portal.inject({
      method: 'POST',
      url: `${ADMIN}/${accountId()}/portal-links`,
      headers: { ...OPERATOR, 'content-type': 'application/json' },
    })
    expect(empty.statusCode).toBe(201)
    expect(empty.json().expires_at).toBe(new Date(clock.now() + 900_000).toISOString())
  })

  it('needs the operator token; unknown account 404; inactive account 409', async () => {
    expect(await fails(h.portal, 'POST', `${ADMIN}/${accountId()}/portal-links`, {}, {})).toEqual({ status: 401, body: { ok: false, error: 'unauthorized' } })
    expect(await fails(h.portal, 'POST', `${ADMIN}/${accountId()}/portal-links`, {}, { authorization: `Bearer ${fixture.t.key}` })).toEqual({
      status: 401,
      body: { ok: false, error: 'unauthorized' },
    })
    expect(await fails(h.portal, 'POST', `${ADMIN}/00000000-0000-4000-8000-000000000000/portal-links`, {})).toEqual({
      status: 404,
      body: { ok: false, error: 'not found' },
    })
    const inactive = await createTestTenant(h.deps)
    try {
      await h.deps.tenants.updateAccount(inactive.account.id, { active: false })
      expect(await fails(h.portal, 'POST', `${ADMIN}/${inactive.account.id}/portal-links`, {})).toEqual({ status: 409, body: { ok: false, error: 'conflict' } })
    } finally {
      await inactive.cleanup()
    }
  })

  it('the first GET answers 303 to the portal with the session cookie; a second GET answers the expired page and no cookie', async () => {
    const { url } = await mintLink(h.portal, accountId())
    const first = await follow(url)
    expect(first.statusCode).toBe(303)
    expect(first.headers.location).toBe('/portal/')
    expect(first.headers['referrer-policy']).toBe('no-referrer')
    expect(first.headers['cache-control']).toBe('no-store')
    const cookie = setCookieOf(first)!
    const value = cookie.value!
    expect(cookie.name).toBe('lsv_portal')
    expect(cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // the cookie value is a new secret: neither the link token nor anything stored
    expect(cookie.value).not.toBe(tokenOf(url))
    expect(await h.deps.portalAccess.getSession(value)).toBeNull()
    expect(await h.deps.portalAccess.getSession(hashPortalSecret(value))).toMatchObject({ account_id: accountId() })

    const second = await follow(url)
    expect(second.statusCode).toBe(410)
    expect(second.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(second.body).toContain('This sign-in link has expired')
    expect(second.headers['set-cookie']).toBeUndefined()
    // with the first session's cookie too: still no new session
    const third = await follow(url, { cookie: `lsv_portal=${cookie.value}` })
    expect(third.statusCode).toBe(410)
    expect(third.headers['set-cookie']).toBeUndefined()
  })

  it('a HEAD of the link neither uses it up nor sets a cookie', async () => {
    const { url } = await mintLink(h.portal, accountId())
    const head = await h.portal.inject({ method: 'HEAD', url: pathOf(url) })
    expect(head.statusCode).toBe(404)
    expect(head.headers['set-cookie']).toBeUndefined()
    expect((await follow(url)).statusCode).toBe(303)
  })

  it('works strictly before expires_at: one millisecond before 303, at expires_at (or later) the expired page', async () => {
    const late = await mintLink(h.portal, accountId(), { ttl_seconds: 60 })
    const inTime = await mintLink(h.portal, accountId(), { ttl_seconds: 60 })
    const start = clock.now()
    try {
      clock.set(Date.parse(late.expires_at))
      const res = await follow(late.url)
      expect(res.statusCode).toBe(410)
      expect(res.body).toContain('This sign-in link has expired')
      expect(res.headers['set-cookie']).toBeUndefined()
      clock.set(Date.parse(inTime.expires_at) - 1)
      expect((await follow(inTime.url)).statusCode).toBe(303)
      // an expired link stays expired, also when the clock is moved back afterwards (nothing was written)
      clock.set(start)
      expect((await h.deps.portalAccess.getLink(hashPortalSecret(tokenOf(late.url))))?.used_at).toBeNull()
    } finally {
      clock.set(start)
    }
  })

  it('an unknown, malformed, missing or repeated token answers the same expired page', async () => {
    const valid = await mintLink(h.portal, accountId())
    for (const target of [
      '/portal/sign-in?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/portal/sign-in?token=short',
      `/portal/sign-in?token=${'x'.repeat(5000)}`,
      '/portal/sign-in',
      `/portal/sign-in?token=${tokenOf(valid.url)}&token=${tokenOf(valid.url)}`,
    ]) {
      const res = await h.portal.inject({ method: 'GET', url: target })
      expect(res.statusCode, target.slice(0, 60)).toBe(410)
      expect(res.body).toContain('This sign-in link has expired')
      expect(res.headers['set-cookie']).toBeUndefined()
    }
    // none of those used the valid link
    expect((await follow(valid.url)).statusCode).toBe(303)
  })

  it('two simultaneous GETs of one link: exactly one 303 with a cookie, one session stored', async () => {
    for (let round = 0; round < 5; round++) {
      const { url } = await mintLink(h.portal, accountId())
      const answers = await Promise.all([follow(url), follow(url)])
      expect(answers.map((r) => r.statusCode).sort()).toEqual([303, 410])
      expect(answers.filter((r) => r.headers['set-cookie'] !== undefined)).toHaveLength(1)
    }
  })

  it('pages carry a strict Content-Security-Policy and cannot be framed', async () => {
    const res = await follow((await mintLink(h.portal, accountId())).url)
    // the access pages (signed out, a dead link) have no script at all; signed in, the home is the
    // overview, a screen: the screens' policy allows the portal's own script and stylesheet only
    const home = await h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie: `lsv_portal=${setCookieOf(res)!.value}` } })
    const screenCsp = String(home.headers['content-security-policy'])
    expect(screenCsp).toContain("script-src 'self'")
    expect(screenCsp).toContain("frame-ancestors 'none'")
    expect(screenCsp).toContain("form-action 'self'")
    expect(screenCsp).not.toContain('unsafe-inline')
    expect(home.headers['x-frame-options']).toBe('DENY')
    for (const r of [await h.portal.inject({ method: 'GET', url: '/portal/' }), await follow('http://x/portal/sign-in?token=nope')]) {
      const csp = String(r.headers['content-security-policy'])
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).toContain("form-action 'self'")
      expect(csp).not.toContain('unsafe-inline')
      expect(csp).not.toContain('script-src')
      expect(r.headers['x-frame-options']).toBe('DENY')
      expect(r.headers['x-content-type-options']).toBe('nosniff')
    }
  })
})

describe('portal session cookie attributes follow the portal origin', () => {
  it('http: HttpOnly, SameSite=Lax, Path=/, Max-Age 7 days, no Secure, plain name', async () => {
    const h = await createHarness({ config: { portalBaseUrl: 'http://portal.localhost:8081' } })
    const t = await createTestTenant(h.deps)
    try {
      const { url } = await mintLink(h.portal, t.account.id)
      expect(url.startsWith('http://portal.localhost:8081/portal/sign-in?token=')).toBe(true)
      const res = await h.portal.inject({ method: 'GET', url: pathOf(url) })
      const raw = String(res.headers['set-cookie'])
      expect(setCookieOf(res)).toMatchObject({ name: 'lsv_portal', httpOnly: true, sameSite: 'lax', path: '/', maxAge: 604800 })
      expect(raw).not.toMatch(/secure/i)
      expect(raw).not.toMatch(/domain=/i)
    } finally {
      await t.cleanup()
      await h.close()
    }
  })

  it('https: Secure, and the __Host- prefix (no Domain, Path=/)', async () => {
    const h = await createHarness({ config: { portalBaseUrl: 'https://portal.example.test' } })
    const t = await createTestTenant(h.deps)
    try {
      const { url } = await mintLink(h.portal, t.account.id)
      expect(url.startsWith('https://portal.example.test/portal/sign-in?token=')).toBe(true)
      const res = await h.portal.inject({ method: 'GET', url: pathOf(url) })
      const cookie = setCookieOf(res)!
      expect(cookie).toMatchObject({ name: '__Host-lsv_portal', httpOnly: true, secure: true, sameSite: 'lax', path: '/', maxAge: 604800 })
      expect(String(res.headers['set-cookie'])).not.toMatch(/domain=/i)
      // the cookie is read back under that name (and not under the plain one)
      const page = (cookieHeader: string) => h.portal.inject({ method: 'GET', url: '/portal/', headers: { cookie: cookieHeader } })
      expect((await page(`__Host-lsv_portal=${cookie.value}`)).body).toContain(t.publicId)
      expect((await page(`lsv_portal=${cookie.value}`)).body).toContain('Not signed in')
    } finally {
      await t.cleanup()
      await h.close()
    }
  })
})
