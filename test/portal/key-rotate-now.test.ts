import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueApiKey } from '@lsv/shared/domain/tenants/manage-api-keys.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { followReveal } from './reveal-support.ts'
import { formPost, page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * Rotating an API key with no grace ("None: at once") stops the old key at once, so it asks first,
 * as the webhook secret's "no time: stop it now" (…/secret/rotate-now) and Revoke do: the row's
 * post without `confirm=yes` answers 303 to `…/keys/{key}/rotate-now`, a question saying the old
 * key stops at once, and only that page's form rotates. The new key's page then says the old key
 * stopped, not "works until <now>".
 */
describe('portal: rotating an API key with no grace asks first', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal())
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const connection = () => `/portal/connections/${t.apiConnectionId}`
  const keysOf = async () => (await deps.tenants.listApiKeys(t.account.id)).filter((k) => k.connection_id === t.apiConnectionId)
  const revokedAt = async (keyId: string) => (await keysOf()).find((k) => k.id === keyId)!.revoked_at
  const rotateEntries = async () => (await deps.auditLog.list(t.account.id, { limit: 200 })).data.filter((e) => e.action === 'api_key.rotate').length

  // mutation: the rotate route rotating at grace 0 without the confirmation (before the fix) fails
  // the 303 to the question, the unchanged key and the unchanged audit log
  it('"None: at once" leads to a question; only its confirmed form rotates; the new key\'s page says the old one stopped', async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'], name: 'Nightly sync' })
    const rotate = `${connection()}/keys/${key.id}/rotate`
    const keys = (await keysOf()).length
    const audited = await rotateEntries()

    const unconfirmed = await formPost(portal, rotate, cookie, { grace_seconds: '0' })
    expect(unconfirmed.statusCode).toBe(303)
    expect(unconfirmed.headers.location).toBe(`${rotate}-now`)
    expect(await revokedAt(key.id)).toBeNull()
    expect((await keysOf()).length).toBe(keys)
    expect(await rotateEntries()).toBe(audited)

    const question = await page(portal, `${rotate}-now`, cookie)
    expect(question.statusCode).toBe(200)
    expect(question.body).toContain('<title>Rotate this API key and stop the old one now?')
    expect(question.body).toContain(`<strong>API key <code>${key.prefix}…</code></strong> (Nightly sync), and the old key stops working at once`)
    expect(question.body).toMatch(
      new RegExp(
        `<form method="post" action="${rotate}" class="actions">\\s*<input type="hidden" name="grace_seconds" value="0"><input type="hidden" name="confirm" value="yes">\\s*<button type="submit" class="danger">Rotate and stop the old key now</button>\\s*<a href="${connection()}#keys-h">Cancel</a>`,
      ),
    )
    // asking (and asking again: a reload) changed nothing
    expect((await page(portal, `${rotate}-now`, cookie)).statusCode).toBe(200)
    expect(await revokedAt(key.id)).toBeNull()

    const confirmed = await formPost(portal, rotate, cookie, { grace_seconds: '0', confirm: 'yes' })
    const shown = await followReveal(portal, confirmed, cookie)
    expect(Date.parse((await revokedAt(key.id))!)).toBeLessThanOrEqual(Date.now())
    expect(await rotateEntries()).toBe(audited + 1)
    // mutation: the note saying "The old key works until <now>" whatever the grace
    expect(shown.body).toContain('The old key stopped working at once')
    expect(shown.body).not.toContain('The old key works until')

    // Back to the question: the old key has stopped, so there is nothing to rotate and no form
    const again = await page(portal, `${rotate}-now`, cookie)
    expect(again.statusCode).toBe(200)
    expect(again.body).toContain('<title>API key stopped working')
    expect(again.body).toContain('so it cannot be rotated')
    expect(again.body).not.toContain('name="confirm"')
  })

  it('a rotation with a grace still rotates at once and says until when the old key works', async () => {
    const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
    const rotated = await formPost(portal, `${connection()}/keys/${key.id}/rotate`, cookie, { grace_seconds: '3600' })
    const shown = await followReveal(portal, rotated, cookie)
    expect(shown.body).toMatch(/The old key works until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\./)
    expect(Date.parse((await revokedAt(key.id))!)).toBeGreaterThan(Date.now() + 3_000_000)
  })

  it("another account's key: the unconfirmed post and the question are 404, and nothing changes", async () => {
    const other = await createTestTenant(deps)
    try {
      const otherCookie = await signIn(portal, other.account.id)
      const key = await issueApiKey(deps, t.account.id, t.apiConnectionId, { scopes: ['contacts:write'] })
      const rotate = `${connection()}/keys/${key.id}/rotate`
      expect((await formPost(portal, rotate, otherCookie, { grace_seconds: '0' })).statusCode).toBe(404)
      expect((await page(portal, `${rotate}-now`, otherCookie)).statusCode).toBe(404)
      expect((await formPost(portal, rotate, otherCookie, { grace_seconds: '0', confirm: 'yes' })).statusCode).toBe(404)
      expect(await revokedAt(key.id)).toBeNull()
    } finally {
      await other.cleanup()
    }
  })
})
