import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { PUBLIC_SUFFIX } from '@lsv/shared/domain/tenants/domains.ts'
import { recordAudit } from '@lsv/shared/domain/audit/record.ts'
import { generateApiKey, generateSourceToken } from '@lsv/shared/domain/auth/hashing.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'

/** Screen 4, Settings, and the audit log page, as a browser uses them (app.inject). */
describe('portal screen: settings, and the audit log', () => {
  let h: Harness
  let tenants: ManagedTenant[] = []
  let accountId = ''
  let otherId = ''
  let cookie = ''
  const admin = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const res = await h.portal.inject({
      method,
      url,
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    })
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300)
    return res.json()
  }
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')

  beforeAll(async () => {
    h = await createHarness()
    // through the management API: this account bare, the other with a domain of its own
    tenants = [
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY),
      await createTestTenant({ managementApi: h.portal, deps: h.deps }, { ...ACCOUNT_ONLY, authorizedDomains: ['other.example'] }),
    ]
    accountId = tenants[0]!.accountId
    otherId = tenants[1]!.accountId
    cookie = await signIn(h.portal, accountId)
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
  })

  it('without a session the settings and audit pages redirect to the sign-in explanation', async () => {
    for (const url of ['/portal/settings', '/portal/audit']) {
      const res = await h.portal.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(303)
      expect(res.headers.location).toBe('/portal/')
    }
  })

  it("authorized domains: saved as the management API saves them (normalized, deduplicated); the domain's refusal shown next to the field", async () => {
    const saved = await formPost(h.portal, '/portal/settings/domains', cookie, { domains: 'Example.COM\n\nshop.example.com\nexample.com\n' })
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toBe('/portal/settings?flash=domains-saved')
    expect((await admin('GET', `${ADMIN}/${accountId}/authorized-domains`)).domains).toEqual(['example.com', 'shop.example.com'])
    const shown = await page(h.portal, '/portal/settings?flash=domains-saved', cookie)
    expect(shown.body).toContain('Authorized domains saved.')
    expect(shown.body).toContain('example.com\nshop.example.com</textarea>')
    expect(shown.headers['content-security-policy']).toContain("frame-ancestors 'none'")

    const refused = await formPost(h.portal, '/portal/settings/domains', cookie, { domains: 'good.example\nco.uk' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain(`line 2 (co.uk): ${esc(PUBLIC_SUFFIX)}`)
    expect(refused.body).toContain('aria-invalid="true"')
    // the typed text is kept for correction; nothing was saved
    expect(refused.body).toContain('good.example\nco.uk</textarea>')
    expect((await admin('GET', `${ADMIN}/${accountId}/authorized-domains`)).domains).toEqual(['example.com', 'shop.example.com'])
    // another account's list is not this account's
    expect(shown.body).not.toContain('other.example')
  })

  it("custom fields: created through the domain function, listed, and a duplicate key refused with the domain's answer", async () => {
    const created = await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'plan', label: 'Plan <b>', type: 'select' })
    expect(created.statusCode).toBe(303)
    expect((await admin('GET', `${ADMIN}/${accountId}/custom-fields`)).data).toMatchObject([{ key: 'plan', label: 'Plan <b>', type: 'select' }])
    const list = await page(h.portal, '/portal/settings', cookie)
    expect(list.body).toContain('<td data-label="Label">Plan &lt;b&gt;</td>')
    const dup = await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'plan', label: 'Again', type: 'text' })
    expect(dup.statusCode).toBe(400)
    const api = await h.portal.inject({
      method: 'POST',
      url: `${ADMIN}/${accountId}/custom-fields`,
      headers: { ...OPERATOR, 'content-type': 'application/json' },
      payload: JSON.stringify({ key: 'plan', label: 'Again', type: 'text' }),
    })
    expect(api.statusCode).toBe(409)
    // the API's code (409 conflict) reads as a sentence on the form (ui.ts formError, issue 22)
    expect(api.json().error).toBe('conflict')
    expect(dup.body).toContain('That already exists, so nothing was changed.')
    const bad = await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'Not A Key', label: 'x', type: 'nope' })
    expect(bad.statusCode).toBe(400)
    expect(bad.body.match(/class="field-error"/g)!.length).toBeGreaterThanOrEqual(2)
    expect((await admin('GET', `${ADMIN}/${accountId}/custom-fields`)).data).toHaveLength(1)
  })

  it("the audit page lists this account's changes newest first with keyset pages, and not another account's", async () => {
    for (let i = 0; i < 55; i++) {
      await recordAudit(h.deps, { account_id: accountId, actor: 'portal session 000000000000', action: 'test.fill', target: { n: String(i) } })
    }
    await recordAudit(h.deps, { account_id: otherId, actor: 'portal session 111111111111', action: 'other.account', target: {} })
    const first = await page(h.portal, '/portal/audit', cookie)
    expect(first.statusCode).toBe(200)
    expect(first.body).not.toContain('other.account')
    expect(first.body.match(/test\.fill/g)).toHaveLength(50)
    const older = /href="\/portal\/audit\?before=([^"]+)"/.exec(first.body)
    expect(older).not.toBeNull()
    const second = await page(h.portal, `/portal/audit?before=${older![1]}`, cookie)
    expect(second.statusCode).toBe(200)
    // the portal's own changes were first; the page after the first 50 entries reaches them
    expect(second.body.match(/test\.fill/g)).toHaveLength(5)
    expect(second.body).toContain('domains.set')
    expect(second.body).toContain('custom_field.create')
    expect(first.body).not.toContain('domains.set')
    // newest first: fill 54 leads the first page, fill 0 is on the second
    expect(first.body.indexOf('n: 54')).toBeLessThan(first.body.indexOf('n: 53'))
    expect(second.body).toContain('n: 0<')
    expect((await page(h.portal, '/portal/audit?before=not-an-id', cookie)).statusCode).toBe(400)
  })

  it('recordAudit redacts a secret by its name or its shape, so none can reach the log, and never throws', async () => {
    const deps = { auditLog: h.deps.auditLog, clock: new ManualClock(Date.now()) }
    const base = { account_id: accountId, actor: 'portal session 000000000000', action: 'x' }
    const key = generateApiKey()
    const token = generateSourceToken()
    // mutation: refusing (throwing) instead of redacting, as before issue 21 item 4, fails each
    await expect(recordAudit(deps, { ...base, target: {}, details: { signing_secret: 'a' } })).resolves.toMatchObject({
      details: { signing_secret: '[redacted]' },
    })
    await expect(recordAudit(deps, { ...base, target: {}, details: { webhook_url: 'https://x' } })).resolves.toMatchObject({
      details: { webhook_url: '[redacted]' },
    })
    await expect(recordAudit(deps, { ...base, target: { any: key } })).resolves.toMatchObject({ target: { any: '[redacted]' } })
    const listed = await recordAudit(deps, { ...base, target: {}, details: { list: ['ok', `https://e/x?token=${token}`] } })
    expect(listed.details).toEqual({ list: ['ok', 'https://e/x?token=[redacted]'] })
    const stored = JSON.stringify((await h.deps.auditLog.list(accountId, { limit: 20 })).data)
    for (const secret of [key, token]) expect(stored).not.toContain(secret)
    // a key's display prefix and ids are fine
    await expect(recordAudit(deps, { ...base, target: { key_id: 'key_abc' }, details: { prefix: generateApiKey().slice(0, 12) } })).resolves.toMatchObject({
      action: 'x',
    })
  })
})
