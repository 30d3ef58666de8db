import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, PORTAL_ORIGIN } from './screens-support.ts'

/**
 * Issue 22, defect 3 ("smaller defects"), as a browser's requests see them through app.inject:
 * an unknown /portal/* path is a 404 page (the API keeps its JSON), form errors read as
 * sentences (no schema text) and a duplicate location says what happened, a key in its grace
 * period says when it stops, and the audit table's scrolling box takes keyboard focus.
 * The visual and script parts are in test/browser/portal-small-defects.test.ts.
 */
describe('portal: the smaller defects of issue 22', () => {
  let h: Harness
  let tenants: ManagedTenant[] = []
  let accountId = ''
  let cookie = ''
  const connectionIdFrom = (location: string | undefined) => /\/portal\/connections\/([^?/]+)/.exec(location ?? '')![1]!
  /** the text of a page, tags dropped, so a sentence split by markup still matches */
  const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ')

  beforeAll(async () => {
    h = await createHarness()
    tenants = [await createTestTenant({ managementApi: h.portal, deps: h.deps }, ACCOUNT_ONLY)]
    accountId = tenants[0]!.accountId
    cookie = await signIn(h.portal, accountId)
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
  })

  // mutation: drop registerPortalNotFound from portal/index.ts → the JSON envelope answers
  // (content-type application/json), and every expectation on the page below fails
  it('an unknown /portal/* path is a 404 page: in the frame when signed in, plain when not; the API keeps its JSON 404', async () => {
    const signedIn = await page(h.portal, '/portal/no-such-screen', cookie)
    expect(signedIn.statusCode).toBe(404)
    expect(signedIn.headers['content-type']).toContain('text/html')
    expect(signedIn.headers['cache-control']).toBe('no-store')
    expect(signedIn.headers['content-security-policy']).toContain("script-src 'self'")
    expect(signedIn.body).toContain('<h1>Page not found</h1>')
    // the frame: navigation and the account, no entry marked current
    expect(signedIn.body).toContain('<nav aria-label="Portal">')
    expect(signedIn.body).toContain('href="/portal/connections"')
    expect(signedIn.body).not.toContain('aria-current="page"')

    const signedOut = await page(h.portal, '/portal/connections/x/y/z', 'lsv_portal=not-a-session')
    expect(signedOut.statusCode).toBe(404)
    expect(signedOut.headers['content-type']).toContain('text/html')
    expect(signedOut.body).toContain('<h1>Page not found</h1>')
    expect(text(signedOut.body)).toContain('sign in with a sign-in link')
    expect(signedOut.body).not.toContain('<nav aria-label="Portal">')
    expect(signedOut.headers['set-cookie']).toBeUndefined()

    // a form post to a missing page (no form parser on that path) is the same page, not a JSON 415
    const posted = await formPost(h.portal, '/portal/nothing-here', cookie, { a: 'b' })
    expect(posted.statusCode, posted.body).toBe(404)
    expect(posted.body).toContain('<h1>Page not found</h1>')

    // the API (and any path outside /portal) keeps the envelope
    for (const url of ['/api/v1/no-such-route', '/no-such-path']) {
      const api = await h.portal.inject({ method: 'GET', url, headers: { cookie } })
      expect(api.statusCode).toBe(404)
      expect(api.json()).toEqual({ ok: false, error: 'not found' })
    }
  })

  // mutation: in forms.ts checkForm, `errors[path] ??= e.message` (the schema's text) instead of
  // fieldMessage(e) → "must match pattern" / "must be integer" appear and the sentences do not
  it('form errors read as sentences for their field, never as schema text', async () => {
    const bad = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', source: 'Bad Source' })
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain('Use lower-case letters, digits, - and _ only, starting with a letter or digit (at most 64 characters).')
    expect(bad.body).not.toMatch(/must match pattern|must be equal to|must not have/)

    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', source: 'crm' })
    expect(created.statusCode).toBe(303)
    const connectionId = connectionIdFrom(created.headers.location)
    const noScopes = await formPost(h.portal, `/portal/connections/${connectionId}/keys`, cookie, { name: 'x' })
    expect(noScopes.statusCode).toBe(400)
    expect(noScopes.body).toContain('Choose at least one scope.')

    const key = await formPost(h.portal, `/portal/connections/${connectionId}/keys`, cookie, { scopes: 'contacts:write' })
    expect(key.statusCode, key.body).toBeLessThan(400)
    const keyId = (await h.deps.tenants.listApiKeys(accountId)).find((k) => k.connection_id === connectionId)!.id
    for (const [grace, sentence] of [
      ['-5', 'Enter a whole number, such as 3600.'],
      ['soon', 'Enter a whole number, such as 3600.'],
      ['99999999', 'Enter 2592000 (30 days) or less.'],
    ] as const) {
      const res = await formPost(h.portal, `/portal/connections/${connectionId}/keys/${keyId}/rotate`, cookie, { grace_seconds: grace })
      expect(res.statusCode, grace).toBe(400)
      expect(res.body, grace).toContain(`Grace: ${sentence}`)
      expect(res.body, grace).not.toMatch(/must be integer|must be &lt;=/)
    }

    const field = await formPost(h.portal, '/portal/settings/custom-fields', cookie, { key: 'Not A Key', label: 'x', type: 'nope' })
    expect(field.statusCode).toBe(400)
    expect(field.body).toContain('Use lower-case letters, digits and _ only, starting with a letter (at most 64 characters).')
    expect(field.body).toContain('Choose one of the options offered.')
    expect(field.body).not.toMatch(/must match pattern|must be equal to/)
  })

  // mutation: formError(errors) without the locations form's words in connections/views.ts →
  // the generic sentence, not this one; with REFUSALS gone from ui.ts too, the bare "conflict"
  it('adding a location twice says that it is already added, not "conflict"', async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'partnercrm' })
    const connectionId = connectionIdFrom(created.headers.location)
    const first = await formPost(h.portal, `/portal/connections/${connectionId}/locations`, cookie, { location_id: 'loc-1' })
    expect(first.statusCode, first.body).toBeLessThan(400)
    const again = await formPost(h.portal, `/portal/connections/${connectionId}/locations`, cookie, { location_id: 'loc-1' })
    expect(again.statusCode).toBe(400)
    expect(again.body).toContain('That location id is already added to this connection, so nothing was changed.')
    expect(again.body).not.toMatch(/role="alert">conflict</)
  })

  // mutation: keyState in connections/views.ts printing `revoked <revoked_at>` whenever
  // revoked_at is set (the old wording) → "stops working … (grace period)" is missing
  it('a key in its grace period says when it stops working; a key revoked at once says revoked', async () => {
    const created = await formPost(h.portal, '/portal/connections', cookie, { type: 'api', source: 'graced' })
    const connectionId = connectionIdFrom(created.headers.location)
    for (const name of ['later', 'now']) {
      const res = await formPost(h.portal, `/portal/connections/${connectionId}/keys`, cookie, { scopes: 'contacts:write', name })
      expect(res.statusCode, res.body).toBeLessThan(400)
    }
    const keys = (await h.deps.tenants.listApiKeys(accountId)).filter((k) => k.connection_id === connectionId)
    const later = keys.find((k) => k.name === 'later')!
    const now = keys.find((k) => k.name === 'now')!
    // the question's confirmed posts (issue 29, D7: revoking asks first)
    const revoke = (keyId: string, grace: string) =>
      formPost(h.portal, `/portal/connections/${connectionId}/keys/${keyId}/revoke`, cookie, { grace_seconds: grace, confirm: 'yes' })
    expect((await revoke(later.id, '3600')).statusCode).toBe(303)
    expect((await revoke(now.id, '0')).statusCode).toBe(303)
    const shown = text((await page(h.portal, `/portal/connections/${connectionId}`, cookie)).body)
    // a row's text runs from its key's prefix to the next key's (every prefix starts lsk_)
    const rowOf = (prefix: string) => `lsk_${shown.split('lsk_').find((r) => `lsk_${r}`.startsWith(`${prefix}…`))}`
    expect(rowOf(later.prefix)).toMatch(/stops working in 1 h \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\) \(grace period\)/)
    expect(rowOf(later.prefix)).not.toContain('revoked')
    expect(rowOf(now.prefix)).toMatch(/revoked .*\(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/)
  })

  // mutation: the audit table back in a plain <div class="table-wrap"> (no scrollingTable) →
  // no focusable region; or <code> without class="action" → the no-wrap rule has nothing to hold
  it('the audit table scrolls in a focusable, named region; action names are marked as one word', async () => {
    const res = await page(h.portal, '/portal/audit', cookie)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('<div class="table-wrap" tabindex="0" role="region" aria-label="Audit log entries">')
    expect(res.body).toContain('<code class="action">connection.create</code>')
  })

  it('the 404 page is what a portal page is under any method a browser uses (HEAD has no body)', async () => {
    const head = await h.portal.inject({ method: 'HEAD', url: '/portal/nope', headers: { cookie, origin: PORTAL_ORIGIN } })
    expect(head.statusCode).toBe(404)
    expect(head.headers['content-type']).toContain('text/html')
  })
})
