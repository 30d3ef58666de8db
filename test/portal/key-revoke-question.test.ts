import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey, rotateApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * Issue 29, D7: revoking an API key asks first. The row's Revoke (with its grace) and, during a
 * grace, "Revoke now" are GET forms to a question page that names the key and says when it stops;
 * only that page's form (its post carries `confirm=yes`) revokes. A post without it is sent to
 * the question and changes nothing.
 */
describe('portal: revoking an API key asks first (issue 29, D7)', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal())
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const connection = () => `/portal/connections/${t.apiConnectionId}`
  const revokedAt = async (keyId: string) => (await deps.tenants.listApiKeys(t.account.id)).find((k) => k.id === keyId)!.revoked_at
  const revokeEntries = async () => (await deps.auditLog.list(t.account.id, { limit: 200 })).data.filter((e) => e.action === 'api_key.revoke').length

  it("the row's Revoke leads to a question naming the key; the unconfirmed post changes nothing; the confirmed one revokes", async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'], name: 'Nightly import' })
    const revoke = `${connection()}/keys/${key.id}/revoke`
    const shown = (await page(portal, connection(), cookie)).body
    // mutation: the row's Revoke posting at once (method="post") fails here
    expect(shown).toMatch(
      new RegExp(
        `<form method="get" action="${revoke}"><span><label for="[^"]+">Grace</label><select id="[^"]+" name="grace_seconds"><option value="0" selected>`,
      ),
    )

    const question = await page(portal, `${revoke}?grace_seconds=0`, cookie)
    expect(question.statusCode).toBe(200)
    expect(question.body).toContain('<title>Revoke this API key?')
    expect(question.body).toContain(`<strong>API key <code>${key.prefix}…</code></strong> (Nightly import) stops working at once`)
    expect(question.body).toMatch(
      new RegExp(
        `<form method="post" action="${revoke}" class="actions">\\s*<input type="hidden" name="grace_seconds" value="0"><input type="hidden" name="confirm" value="yes">\\s*<button type="submit" class="danger">Revoke key now</button>\\s*<a href="${connection()}#keys-h">Cancel</a>`,
      ),
    )
    // asking changed nothing
    expect(await revokedAt(key.id)).toBeNull()

    const audited = await revokeEntries()
    // mutation: a post without confirm=yes revoking (the old form) fails both checks below
    const unconfirmed = await formPost(portal, revoke, cookie, { grace_seconds: '0' })
    expect(unconfirmed.statusCode).toBe(303)
    expect(unconfirmed.headers.location).toBe(`${revoke}?grace_seconds=0`)
    expect(await revokedAt(key.id)).toBeNull()
    expect(await revokeEntries()).toBe(audited)

    const confirmed = await formPost(portal, revoke, cookie, { grace_seconds: '0', confirm: 'yes' })
    expect(confirmed.statusCode).toBe(303)
    expect(confirmed.headers.location).toBe(`${connection()}?flash=key-revoked`)
    expect(Date.parse((await revokedAt(key.id))!)).toBeLessThanOrEqual(Date.now())
    expect(await revokeEntries()).toBe(audited + 1)
  })

  it('a grace chosen in the row is said on the question and kept by its form', async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    const revoke = `${connection()}/keys/${key.id}/revoke`
    const question = await page(portal, `${revoke}?grace_seconds=3600`, cookie)
    expect(question.statusCode).toBe(200)
    expect(question.body).toContain(`<strong>API key <code>${key.prefix}…</code></strong> keeps working for a grace of 1 hour, then stops`)
    expect(question.body).toContain('<input type="hidden" name="grace_seconds" value="3600"><input type="hidden" name="confirm" value="yes">')
    const confirmed = await formPost(portal, revoke, cookie, { grace_seconds: '3600', confirm: 'yes' })
    expect(confirmed.headers.location).toBe(`${connection()}?flash=key-revoke-scheduled`)
    expect(Date.parse((await revokedAt(key.id))!)).toBeGreaterThan(Date.now() + 3_000_000)
    // an invalid grace in the address is the connection page's error, not a question
    const bad = await page(portal, `${revoke}?grace_seconds=soon`, cookie)
    expect(bad.statusCode).toBe(400)
    expect(bad.body).toContain('class="field-error"')
  })

  it('"Revoke now" during a grace asks too', async () => {
    const old = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    await rotateApiKey(deps, t.account.id, t.apiConnectionId, old.id, 86_400)
    const revoke = `${connection()}/keys/${old.id}/revoke`
    const graceEnd = await revokedAt(old.id)
    const unconfirmed = await formPost(portal, revoke, cookie, { grace_seconds: '0' })
    expect(unconfirmed.headers.location).toBe(`${revoke}?grace_seconds=0`)
    expect(await revokedAt(old.id)).toBe(graceEnd)
    const question = await page(portal, `${revoke}?grace_seconds=0`, cookie)
    expect(question.body).toContain(`<code>${old.prefix}…</code></strong> stops working at once`)
  })

  // Back after "Revoke key now" used to show the same question ("stops working at once") and its
  // form revoked again, with a second api_key.revoke entry. Mutations: the question without the
  // already-revoked case (its form shown again), the post without its no-op (a second entry).
  it('Back after revoking: the question says the key is already revoked; the form again records nothing', async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'], name: 'Nightly sync' })
    const revoke = `${connection()}/keys/${key.id}/revoke`
    const audited = await revokeEntries()
    const first = await formPost(portal, revoke, cookie, { grace_seconds: '0', confirm: 'yes' })
    expect(first.headers.location).toBe(`${connection()}?flash=key-revoked`)
    const stoppedAt = await revokedAt(key.id)
    expect(await revokeEntries()).toBe(audited + 1)

    const back = await page(portal, `${revoke}?grace_seconds=0`, cookie)
    expect(back.statusCode).toBe(200)
    expect(back.body).toContain('<title>API key already revoked')
    expect(back.body).toContain(`<strong>API key <code>${key.prefix}…</code></strong> (Nightly sync) is already revoked`)
    expect(back.body).not.toContain('stops working at once')
    expect(back.body).not.toContain('name="confirm"')
    expect(back.body).toContain(`<a href="${connection()}#keys-h">Back to the connection</a>`)

    // the question's form sent again (a page kept from before, a second tab)
    const again = await formPost(portal, revoke, cookie, { grace_seconds: '0', confirm: 'yes' })
    expect(again.statusCode).toBe(303)
    expect(again.headers.location).toBe(`${connection()}?flash=key-already-revoked`)
    expect(await revokeEntries()).toBe(audited + 1)
    expect(await revokedAt(key.id)).toBe(stoppedAt)
    expect((await page(portal, String(again.headers.location), cookie)).body).toContain('That API key was already revoked: nothing was changed.')
  })

  it('Back after a revocation with a grace: nothing left to ask, and the form again records nothing', async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    const revoke = `${connection()}/keys/${key.id}/revoke`
    const audited = await revokeEntries()
    expect((await formPost(portal, revoke, cookie, { grace_seconds: '3600', confirm: 'yes' })).headers.location).toBe(
      `${connection()}?flash=key-revoke-scheduled`,
    )
    const graceEnd = await revokedAt(key.id)
    const back = await page(portal, `${revoke}?grace_seconds=3600`, cookie)
    expect(back.body).toContain('is already set to stop working')
    expect(back.body).not.toContain('name="confirm"')
    const again = await formPost(portal, revoke, cookie, { grace_seconds: '3600', confirm: 'yes' })
    expect(again.headers.location).toBe(`${connection()}?flash=key-revoke-already-scheduled`)
    expect(await revokeEntries()).toBe(audited + 1)
    expect(await revokedAt(key.id)).toBe(graceEnd)
    // stopping it at once is still asked and done
    const now = await page(portal, `${revoke}?grace_seconds=0`, cookie)
    expect(now.body).toContain('stops working at once')
    expect((await formPost(portal, revoke, cookie, { grace_seconds: '0', confirm: 'yes' })).headers.location).toBe(`${connection()}?flash=key-revoked`)
    expect(await revokeEntries()).toBe(audited + 2)
  })

  it("another account's key: the question and the post are 404, and nothing changes", async () => {
    const other = await createTestTenant(deps)
    try {
      const otherCookie = await signIn(portal, other.account.id)
      const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
      const revoke = `${connection()}/keys/${key.id}/revoke`
      expect((await page(portal, `${revoke}?grace_seconds=0`, otherCookie)).statusCode).toBe(404)
      expect((await formPost(portal, revoke, otherCookie, { grace_seconds: '0' })).statusCode).toBe(404)
      expect((await formPost(portal, revoke, otherCookie, { grace_seconds: '0', confirm: 'yes' })).statusCode).toBe(404)
      expect(await revokedAt(key.id)).toBeNull()
    } finally {
      await other.cleanup()
    }
  })
})
