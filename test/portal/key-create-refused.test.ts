import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { formPost, PORTAL_ORIGIN, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * A refused "Create key" form keeps what was typed (docs/portal.md: "a refused form keeps what the
 * user typed and says what is wrong"), as the connection, webhook, custom-field and branding forms
 * do: the name as typed and the scopes as sent, not the empty form with contacts:write ticked.
 */
describe('portal: a refused "Create key" form keeps the name and the scopes sent', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal())
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const keysUrl = () => `/portal/connections/${t.apiConnectionId}/keys`
  const keyCount = async () => (await deps.tenants.listApiKeys(t.account.id)).length
  /** the New key form's part of the page: from its heading to the end of its form */
  const newKeyForm = (body: string) => body.slice(body.indexOf('<h3>New key</h3>'), body.indexOf('</form>', body.indexOf('<h3>New key</h3>')))
  const ticked = (form: string) => [...form.matchAll(/<input type="checkbox" name="scopes" value="([^"]+)" checked>/g)].map((m) => m[1])

  // mutation: keysSection ticking contacts:write and leaving the name empty whatever was sent
  // (the form before the fix) fails both checks
  it('no scope ticked: "Choose at least one scope.", the name typed kept, no scope ticked again', async () => {
    const before = await keyCount()
    const refused = await formPost(portal, keysUrl(), cookie, { name: 'Nightly sync' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('Choose at least one scope.')
    const form = newKeyForm(refused.body)
    expect(form).toMatch(/<input type="text" id="[^"]+" name="name" value="Nightly sync"/)
    expect(ticked(form)).toEqual([])
    expect(await keyCount()).toBe(before)
  })

  it('the scopes sent come back ticked (and only those), the name as typed', async () => {
    // two scopes and one the list does not know: refused by the schema
    const refused = await portal.inject({
      method: 'POST',
      url: keysUrl(),
      headers: { cookie, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'scopes=contacts%3Aread&scopes=contacts%3Alinks%3Awrite&scopes=everything&name=%20Nightly%20%3Csync%3E',
    })
    expect(refused.statusCode).toBe(400)
    const form = newKeyForm(refused.body)
    expect(ticked(form).sort()).toEqual(['contacts:links:write', 'contacts:read'])
    // escaped, and as typed (the leading space too)
    expect(form).toContain('name="name" value=" Nightly &lt;sync&gt;"')
  })

  it('the form as first shown: no name, contacts:write ticked', async () => {
    const shown = await portal.inject({ method: 'GET', url: `/portal/connections/${t.apiConnectionId}`, headers: { cookie } })
    const form = newKeyForm(shown.body)
    expect(ticked(form)).toEqual(['contacts:write'])
    expect(form).toMatch(/name="name" value=""/)
  })
})
