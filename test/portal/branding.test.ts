import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accentProblem, contrastRatio, textOnAccent } from '@lsv/shared/domain/tenants/branding.ts'
import { emulators } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'

/**
 * Issue 22, job 9, light branding (docs/portal.md, "Branding"), as a browser sends the Settings
 * form (app.inject): a display name and an accent colour, refused in the tenant's words when it
 * would not read in light or dark mode; the accent reaches the screens only as a stylesheet of
 * this origin (the CSP stays `style-src 'self'`). The browser side: test/browser/branding.test.ts.
 */
describe('portal branding: display name and accent colour', () => {
  let h: Harness
  let tenant: ManagedTenant
  let cookie = ''
  const operatorName = `Operator name ${Math.random().toString(36).slice(2, 8)}`

  beforeAll(async () => {
    h = await createHarness()
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, { ...ACCOUNT_ONLY, name: operatorName })
    cookie = await signIn(h.portal, tenant.accountId)
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await h?.close()
  })

  it('contrast: the WCAG ratio, the text colour derived from the accent, and the two schemes', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5)
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1)
    expect(textOnAccent('#c2410c')).toBe('#ffffff')
    expect(textOnAccent('#f5c518')).toBe('#000000')
    // mid-tones pass; mutation: dropping the light-mode check lets the pale yellow through, the
    // dark-mode check the navy
    expect(accentProblem('#c2410c')).toBeNull()
    expect(accentProblem('#2f6fd6')).toBeNull()
    expect(accentProblem('#ffff66')).toMatch(/light mode background/)
    expect(accentProblem('#000080')).toMatch(/dark mode background/)
    expect(accentProblem('red')).toMatch(/six hex digits/)
  })

  it('a readable accent and a name are saved (303), shown in the header and title, and linked as a stylesheet of this origin', async () => {
    const saved = await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: '  Acme <Reach>  ', accent: '#C2410C' })
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toBe('/portal/settings?flash=branding-saved')
    const shown = await page(h.portal, '/portal/settings?flash=branding-saved', cookie)
    expect(shown.statusCode).toBe(200)
    // escaped once, trimmed; mutation: the layout keeping account.name shows the operator's name
    expect(shown.body).toContain('<span class="account">Acme &lt;Reach&gt;</span>')
    expect(shown.body).toContain('<title>Settings · Acme &lt;Reach&gt; · Portal</title>')
    expect(shown.body).toContain('<link rel="stylesheet" href="/portal/assets/brand/c2410c.css">')
    expect(shown.body).toContain('Branding saved.')
    expect(shown.headers['content-security-policy']).toContain("style-src 'self'")
    expect(shown.headers['content-security-policy']).not.toContain('unsafe-inline')
    const audit = await page(h.portal, '/portal/audit', cookie)
    expect(audit.body).toContain('branding.set')

    const css = await h.portal.inject({ method: 'GET', url: '/portal/assets/brand/c2410c.css' })
    expect(css.statusCode).toBe(200)
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8')
    expect(css.headers['x-content-type-options']).toBe('nosniff')
    expect(css.headers['cache-control']).toContain('immutable')
    expect(css.body).toContain('--brand: #c2410c;')
    expect(css.body).toContain('--on-brand: #ffffff;')
    // a colour the form refuses has no stylesheet either; mutation: serving any hex answers 200
    expect((await h.portal.inject({ method: 'GET', url: '/portal/assets/brand/ffff66.css' })).statusCode).toBe(404)
    expect((await h.portal.inject({ method: 'GET', url: '/portal/assets/brand/red%7D.css' })).statusCode).toBe(400)
  })

  it('an accent that would not read in one scheme is refused next to its field, and nothing changes', async () => {
    for (const [accent, scheme] of [
      ['#ffff66', 'light'],
      ['#000080', 'dark'],
    ] as const) {
      const refused = await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: 'Other', accent })
      expect(refused.statusCode, accent).toBe(400)
      expect(refused.body).toContain(`too close to the ${scheme} mode background`)
      expect(refused.body).toMatch(/id="brand-accent"[^>]*aria-invalid="true"/)
      // the form keeps what was typed
      expect(refused.body).toContain(`value="${accent}"`)
    }
    const name = await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: 'x'.repeat(81), accent: '' })
    expect(name.statusCode).toBe(400)
    expect(name.body).toContain('80 characters or fewer')
    const unchanged = await page(h.portal, '/portal/settings', cookie)
    expect(unchanged.body).toContain('/portal/assets/brand/c2410c.css')
    expect(unchanged.body).toContain('<span class="account">Acme &lt;Reach&gt;</span>')
  })

  it('empty fields go back to the defaults: the operator’s name, no accent stylesheet', async () => {
    expect((await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: '', accent: '' })).statusCode).toBe(303)
    const shown = await page(h.portal, '/portal/settings', cookie)
    expect(shown.body).not.toContain('/portal/assets/brand/')
    expect(shown.body).toContain(`<span class="account">${operatorName}</span>`)
  })

  // Mutation: branding.ts back to `name.length > MAX_DISPLAY_NAME` -> 80 emoji (160 UTF-16 units) are refused
  it('the 80 characters of a display name are code points: 80 emoji are saved, 81 refused', async () => {
    const emoji = (n: number) => '😀'.repeat(n)
    expect((await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: emoji(80), accent: '' })).statusCode).toBe(303)
    expect((await page(h.portal, '/portal/settings', cookie)).body).toContain(`<span class="account">${emoji(80)}</span>`)
    const refused = await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: emoji(81), accent: '' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('80 characters or fewer')
  })
})

// the record as both tenant-store adapters keep it: the branding survives a write and a read on
// Firestore too (skipped without the emulators, as test/portal/emulators.test.ts is)
describe.skipIf(!emulators.firestore)('portal branding on Firestore', () => {
  let h: Harness
  let tenant: ManagedTenant
  beforeAll(async () => {
    h = await createHarness({ backend: 'emulators' })
    tenant = await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await h?.close()
  })

  it('saved through the form, stored on the account, shown on the next screen', async () => {
    const cookie = await signIn(h.portal, tenant.accountId)
    expect((await formPost(h.portal, '/portal/settings/branding', cookie, { display_name: 'Firestore Co', accent: '#2f6fd6' })).statusCode).toBe(303)
    expect((await h.deps.tenants.getAccount(tenant.accountId))?.portal_branding).toEqual({ display_name: 'Firestore Co', accent: '#2f6fd6' })
    const shown = await page(h.portal, '/portal/settings', cookie)
    expect(shown.body).toContain('<span class="account">Firestore Co</span>')
    expect(shown.body).toContain('/portal/assets/brand/2f6fd6.css')
  })
})
