import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { sessionCookieOf } from '@lsv/shared/domain/portal/cookie.ts'
import { hashPortalSecret } from '@lsv/shared/domain/portal/secrets.ts'
import { REVEAL_TTL_MS } from '@lsv/shared/domain/portal/reveals.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, PORTAL_ORIGIN } from './screens-support.ts'
import { followReveal, REVEAL_LOCATION, secretIn } from './reveal-support.ts'

/**
 * Issue 22, defect 2: reloading a form's answer repeated the action (a second live key, a
 * duplicate webhook, a second rotation that ended the secret just copied). Each form now answers
 * 303; a new secret is shown on a one-time reveal page that a reload, the back button or another
 * session cannot show again.
 *
 * A browser's reload of a 303's target is a GET of that target: that is what `reload` does.
 * Mutations that fail these tests: the key form answering its page (201) again instead of
 * redirectToReveal (connections/index.ts: the statuses are not 303, and the "reload" — the POST
 * repeated, as a browser does for a 201 — makes a second key); the webhook form likewise
 * (screens-webhooks/index.ts); the rotate form likewise (a second rotation: the first secret no
 * longer verifies); takeReveal reading without deleting (adapters: the reload shows the secret
 * again); takeReveal ignoring the session (another session's look uses it up or shows it);
 * storeReveal storing the view unsealed (the stored record carries the secret).
 */
describe('portal: reloading a form answer repeats nothing (issue 22, defect 2)', () => {
  let h: Harness
  let t: StoredTenant
  let cookie = ''
  let otherSessionCookie = ''
  const sessionHash = (c: string) => hashPortalSecret(sessionCookieOf(PORTAL_ORIGIN, c)!)

  /** a browser's reload of the page it is on: a GET of that URL */
  const reload = (location: string, c = cookie) => page(h.portal, location, c)

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps, { integration: { url: 'https://hooks.example.com/reload' } })
    cookie = await signIn(h.portal, t.accountId)
    // the same account, signed in a second time (another browser, or a colleague)
    otherSessionCookie = await signIn(h.portal, t.accountId)
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  it('create key: 303 to a reveal page; reloading it shows the one-time notice, and there is one new key', async () => {
    const before = (await h.deps.tenants.listApiKeys(t.accountId)).length
    const answer = await formPost(h.portal, `/portal/connections/${t.apiConnectionId}/keys`, cookie, { scopes: 'contacts:write', name: 'once' })
    // nothing in the URL but a random id: the secret never travels in a Location or a history entry
    const shown = await followReveal(h.portal, answer, cookie)
    const key = secretIn(shown.body)
    expect(key).toMatch(/^lsk_/)
    expect(shown.location).not.toContain(key)
    expect(shown.body).toContain(`href="/portal/connections/${t.apiConnectionId}"`)

    const again = await reload(shown.location)
    expect(again.statusCode).toBe(410)
    expect(again.headers['cache-control']).toContain('no-store')
    expect(again.body).toContain('This secret was shown once; rotate again if you lost it.')
    expect(again.body).not.toContain(key)
    expect((await h.deps.tenants.listApiKeys(t.accountId)).length).toBe(before + 1)
  })

  it('add webhook: 303; reloading adds no second webhook and shows the secret no more', async () => {
    const before = (await h.deps.tenants.listIntegrations(t.accountId)).length
    const answer = await formPost(h.portal, '/portal/webhooks', cookie, { url: 'https://hooks.example.com/once', payload_version: '2' })
    const shown = await followReveal(h.portal, answer, cookie)
    const secret = secretIn(shown.body)
    expect(secret).toMatch(/^whsec_/)
    const again = await reload(shown.location)
    expect(again.statusCode).toBe(410)
    expect(again.body).not.toContain(secret)
    const after = await h.deps.tenants.listIntegrations(t.accountId)
    expect(after.length).toBe(before + 1)
    expect(after.filter((i) => i.url === 'https://hooks.example.com/once')).toHaveLength(1)
  })

  it('rotate secret, stop it now: reloading does not rotate again, so the secret copied keeps verifying', async () => {
    const answer = await formPost(h.portal, `/portal/webhooks/${t.integrationId}/secret/rotate`, cookie, { grace_seconds: '0', confirm: 'yes' })
    const shown = await followReveal(h.portal, answer, cookie)
    const copied = secretIn(shown.body)
    expect(copied).not.toBe(t.signingSecret)
    expect((await reload(shown.location)).statusCode).toBe(410)

    const stored = (await h.deps.tenants.getIntegration(t.integrationId))!
    expect(stored.signing_secrets.map((s) => s.secret)).toEqual([copied])
    // the receiver verifies with what was copied
    const id = 'msg_reload'
    const at = new Date()
    const payload = '{"type":"contact.updated"}'
    const signature = new Webhook(copied).sign(id, at, payload)
    expect(() =>
      new Webhook(copied).verify(payload, { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature }),
    ).not.toThrow()
  })

  it('reveal is bound to its session: another session of the same account sees the notice and cannot use it up', async () => {
    const answer = await formPost(h.portal, `/portal/connections/${t.apiConnectionId}/keys`, cookie, { scopes: 'contacts:write' })
    expect(answer.statusCode).toBe(303)
    const location = String(answer.headers.location)
    expect(location).toMatch(REVEAL_LOCATION)
    const theirs = await reload(location, otherSessionCookie)
    expect(theirs.statusCode).toBe(410)
    expect(theirs.body).not.toMatch(/lsk_/)
    // still there for the session that made it
    expect(secretIn((await reload(location)).body)).toMatch(/^lsk_/)
  })

  it('is stored sealed: the record holds no secret, and only the session that made it can take it', async () => {
    const answer = await formPost(h.portal, `/portal/webhooks/${t.integrationId}/secret/reveal`, cookie)
    const id = String(answer.headers.location).split('/').pop()!
    expect(await h.deps.portalAccess.takeReveal(id, sessionHash(otherSessionCookie))).toBeNull()
    const record = (await h.deps.portalAccess.takeReveal(id, sessionHash(cookie)))!
    expect(record).toMatchObject({ id, account_id: t.accountId, session_hash: sessionHash(cookie) })
    const current = (await h.deps.tenants.getIntegration(t.integrationId))!.signing_secrets[0]!.secret
    expect(record.sealed).not.toContain(current)
    expect(record.sealed).not.toContain(current.replace(/^whsec_/, ''))
    expect(Date.parse(record.expires_at) - Date.parse(record.created_at)).toBe(REVEAL_TTL_MS)
    // taken: the page has nothing left to show
    expect((await reload(String(answer.headers.location))).statusCode).toBe(410)
  })

  it('a malformed or unknown reveal id is the same notice, never an error', async () => {
    for (const id of ['x', 'A'.repeat(22), 'A'.repeat(65)]) {
      const res = await reload(`/portal/reveal/${id}`)
      // 404: an id longer than the route's parameter allows names no page (portal/index.ts's
      // error handler: an invalid path parameter gets the 404 page, since 2026-11-30)
      expect([404, 410], id).toContain(res.statusCode)
      expect(res.headers['content-type']).toContain('text/html')
    }
  })
})
