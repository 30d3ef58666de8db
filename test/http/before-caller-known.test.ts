import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PreAuthBudget, PRE_AUTH_LIMITS } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { scanPartnerCrmLocation } from '@lsv/shared/domain/ingest/location-scan.ts'
import { MAX_ISSUES } from '@lsv/shared/http/validation.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { signIn } from '../portal/support.ts'
import { formPost, PORTAL_ORIGIN } from '../portal/screens-support.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'

/**
 * Issue 21, items 1, 2, 3 and 6: what a caller can make a service do before it is identified
 * (docs/architecture.md, "Before the caller is known").
 */
const MiB = 1024 * 1024

describe('before the caller is known', () => {
  let h: Harness
  let t: StoredTenant
  let cookie: string
  let connectionId: string

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.account.id)
    connectionId = t.webhook.id
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  // Item 1. Mutation: requirePortalSession registered as `preHandler` again (portal/index.ts):
  // the 8 MiB JSON body is read, parsed and validated first, and the answer is a 400 page (or
  // 413), not the 401 sign-in page.
  it('a portal form route refuses an anonymous caller before reading its body', async () => {
    const huge = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i])))
    expect(huge.length).toBeGreaterThan(2 * MiB)
    for (const url of ['/portal/settings/domains', `/portal/connections/${connectionId}/preview`]) {
      const anonymous = await h.portal.inject({ method: 'POST', url, headers: { origin: PORTAL_ORIGIN, 'content-type': 'application/json' }, payload: huge })
      expect(anonymous.statusCode, url).toBe(401)
      expect(anonymous.body.length, url).toBeLessThan(16 * 1024)
      const crossOrigin = await h.portal.inject({ method: 'POST', url, headers: { cookie, 'content-type': 'application/json' }, payload: huge })
      expect(crossOrigin.statusCode, url).toBe(403)
    }
  })

  // Item 1. Mutation: registerFormParser keeps the shared JSON parser (no
  // removeAllContentTypeParsers in forms.ts): the JSON body is parsed and validated, 400 with
  // every error; or the route keeps the app's 8 MiB limit (no onRoute cap): 401 → 400 here.
  it('a signed-in form route takes only a form, within a small limit', async () => {
    const url = '/portal/settings/domains'
    const json = await h.portal.inject({
      method: 'POST',
      url,
      headers: { cookie, origin: PORTAL_ORIGIN, 'content-type': 'application/json' },
      payload: '{"a":1}',
    })
    expect(json.statusCode).toBe(415)
    const large = await formPost(h.portal, url, cookie, { domains: 'x'.repeat(100 * 1024) })
    expect(large.statusCode).toBe(413)
  })

  // Item 1 ("validation errors list a bounded number of issues"). Mutation: issuesFromAjv
  // without `.slice(0, MAX_ISSUES)` (http/validation.ts): 2,000 issues are listed.
  it('a validation error lists at most MAX_ISSUES issues, in a small answer', async () => {
    const res = await h.portal.inject({
      method: 'POST',
      url: `${ADMIN}/${t.account.id}/custom-fields`,
      headers: OPERATOR,
      payload: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`unknown_${i}`, i])),
    })
    expect(res.statusCode).toBe(400)
    const body = res.json() as { issues?: unknown[] }
    expect(body.issues?.length).toBe(MAX_ISSUES)
    expect(res.body.length).toBeLessThan(4 * 1024)
  })

  // Item 6. Mutation: the withinDepth check removed from the preview (portal/connections):
  // the mapper recurses 30,000 levels deep and the page is a 500.
  it('the mapping preview refuses a sample nested deeper than the ingest cap, with a 400 page', async () => {
    const deep = (n: number) => `{"external_id":"x","v":${'['.repeat(n)}${']'.repeat(n)}}`
    const res = await formPost(h.portal, `/portal/connections/${connectionId}/preview`, cookie, { sample: deep(30_000) })
    expect(res.statusCode).toBe(400)
    expect(res.body).toContain('nests deeper than 32 levels')
    const ok = await formPost(h.portal, `/portal/connections/${connectionId}/preview`, cookie, { sample: deep(20) })
    expect(ok.statusCode).toBe(200)
  })

  // Item 3. Mutation: preParsing without deferJsonParsing (edge push.ts): the anonymous body is
  // parsed first, and its bad number answers 400 `invalid JSON body` instead of the location's 404.
  it('an anonymous partner CRM body is not parsed before its location is checked', async () => {
    const push = (payload: string, headers: Record<string, string> = {}) =>
      h.edge.inject({ method: 'POST', url: '/v1/contacts/partnercrm', headers: { host: t.host, 'content-type': 'application/json', ...headers }, payload })
    const unknown = await push('{"contactId":"c","locationId":"no-such-location","n":01}')
    expect(unknown.statusCode, unknown.body).toBe(404)
    // the same body at the real location: authenticated (token-less, before the cutover), then parsed
    const known = await push(`{"contactId":"c","locationId":"${t.locationId}","n":01}`)
    expect(known.json()).toEqual({ ok: false, error: 'invalid JSON body' })
    const accepted = await push(`{"contactId":"c-scan","location_id":"no","locationId":" ${t.locationId} "}`)
    expect(accepted.statusCode, accepted.body).toBe(202)
  })

  it('the location scan reads what JSON.parse reads', () => {
    const scan = (s: string) => scanPartnerCrmLocation(Buffer.from(s))
    expect(scan('{"locationId":"a","locationId":"b"}')).toBe('b')
    expect(scan('{"locationId":"a","locationId":5,"location_id":"c"}')).toBe('c')
    expect(scan('{"location\\u0049d":"e\\u0073c"}')).toBe('esc')
    expect(scan('{"x":{"locationId":"nested"},"y":["\\"]"],"locationId":" top "}')).toBe('top')
    expect(scan(`{"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toBe(null)
    expect(() => scan('{"contactId":')).toThrow('invalid JSON body')
    expect(() => scan('{"a":1} trailing')).toThrow('invalid JSON body')
    expect(() => scan('[1]')).toThrow('invalid payload')
  })

  // Item 2. Mutation: take() without the reserve (preauth-budget.ts: ceiling always
  // instanceBytes): four accounts holding 8 MiB each fill the instance, and account E's small
  // push is refused.
  it('anonymous bodies aimed at some accounts leave room for every other account', () => {
    const budget = new PreAuthBudget(PRE_AUTH_LIMITS)
    let held = 0
    for (const account of ['a', 'b', 'c', 'd']) {
      const lease = budget.lease(account)
      while (lease.take(MiB)) held += MiB
    }
    expect(held).toBeLessThanOrEqual(PRE_AUTH_LIMITS.instanceBytes - PRE_AUTH_LIMITS.reserveBytes!)
    // a further attacker account cannot take more than its guarantee
    expect(budget.lease('f').take(MiB)).toBe(false)
    for (let i = 0; i < 64; i++) expect(budget.lease(`e${i}`).take(8 * 1024), `account e${i}`).toBe(true)
    expect(budget.inUse).toBeLessThanOrEqual(PRE_AUTH_LIMITS.instanceBytes)
  })
})
