import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { signIn } from './support.ts'
import { closeSignedInPortal, formPost, openSignedInPortal, page, type SignedInPortal } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'

/**
 * The end of a signing secret's grace, from the webhook's page (issue 29, D10): after a rotation
 * with a grace the page says until when the previous secret signs too, and "End it now" asks
 * first, then stops it; the next real delivery carries one signature, the new secret's.
 */
describe('portal: ending a rotated signing secret’s grace now', () => {
  let deps: SignedInPortal['deps']
  let portal: Injectable
  let t: StoredTenant
  let cookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let fresh: string

  const base = () => `/portal/webhooks/${t.integrationId}`
  const verifies = (secret: string, r: { body: string; headers: Record<string, unknown> }) => {
    try {
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
      return true
    } catch {
      return false
    }
  }
  /** a test event through the real delivery path: the request the receiver got */
  const delivered = async () => {
    const n = receiver.requests.length
    expect((await formPost(portal, `${base()}/test`, cookie)).statusCode).toBe(303)
    await drainDueTasks(deps)
    expect(receiver.requests.length).toBe(n + 1)
    return receiver.requests.at(-1)!
  }

  beforeAll(async () => {
    receiver = await startReceiver()
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: receiver.url } }))
  })
  afterAll(async () => {
    await closeSignedInPortal({ deps, portal, t })
    await receiver?.close()
  })

  it('with no grace running the page offers nothing to end, and the question leads back', async () => {
    const body = (await page(portal, base(), cookie)).body
    expect(body).not.toContain('id="secret-grace"')
    const ask = await page(portal, `${base()}/secret/end-grace`, cookie)
    expect(ask.statusCode).toBe(303)
    expect(ask.headers.location).toBe(`${base()}#secret`)
  })

  it('after a rotation with grace the page says until when the previous secret signs, and offers "End it now"', async () => {
    const rotated = await followReveal(portal, await formPost(portal, `${base()}/secret/rotate`, cookie, { grace_seconds: '3600' }), cookie)
    fresh = /whsec_[A-Za-z0-9+/=]+/.exec(rotated.body)![0]
    const until = (await deps.tenants.getIntegration(t.integrationId))!.signing_secrets[1]!.expires_at!
    const exact = `${new Date(until).toISOString().slice(0, 19).replace('T', ' ')} UTC`
    // the reveal page says it in the portal's exact time, not a raw ISO instant, and leads back to the secret's section
    expect(rotated.body).toContain(`The previous secret also signs every delivery until ${exact}`)
    expect(rotated.body).not.toContain(until)
    expect(rotated.body).toContain(`href="${base()}#secret"`)
    const body = (await page(portal, base(), cookie)).body
    // mutation: the grace not read for the page -> none of this
    const grace = body.slice(body.indexOf('id="secret-grace"'), body.indexOf('</div>', body.indexOf('id="secret-grace"')))
    expect(grace).toContain('The previous secret still signs every delivery beside the new one')
    // the kit's one time format: relative words, the exact UTC time in the title and for screen readers
    expect(grace).toContain(`and stops <time class="ago" datetime="${until}" title="${exact}">in `)
    expect(grace).toContain(`<form method="get" action="${base()}/secret/end-grace"><button type="submit" class="danger">End it now…</button></form>`)
    // both secrets sign meanwhile
    const during = await delivered()
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(verifies(t.signingSecret, during)).toBe(true)
  })

  it('"End it now" asks first, then stops the previous secret: one signature, the new one; audited; said where the browser lands', async () => {
    const ask = await page(portal, `${base()}/secret/end-grace`, cookie)
    expect(ask.statusCode).toBe(200)
    expect(ask.body).toContain('Stop the previous secret now?')
    expect(ask.body).toContain('name="confirm" value="yes"')
    // a post without the confirmation only leads to the question (mutation: acting on it -> one secret here)
    const crafted = await formPost(portal, `${base()}/secret/end-grace`, cookie, {})
    expect(crafted.statusCode).toBe(303)
    expect(crafted.headers.location).toBe(`${base()}/secret/end-grace`)
    expect((await deps.tenants.getIntegration(t.integrationId))!.signing_secrets).toHaveLength(2)

    const done = await formPost(portal, `${base()}/secret/end-grace`, cookie, { confirm: 'yes' })
    expect(done.statusCode).toBe(303)
    expect(done.headers.location).toBe(`${base()}?flash=secret-grace-ended#secret`)
    expect((await deps.tenants.getIntegration(t.integrationId))!.signing_secrets.map((s) => s.secret)).toEqual([fresh])
    const landed = (await page(portal, `${base()}?flash=secret-grace-ended`, cookie)).body
    expect(landed).toContain('The previous signing secret no longer signs')
    expect(landed).not.toContain('id="secret-grace"')
    const entry = (await listAudit(deps, t.account.id, { limit: 20 })).data.find((e) => e.action === 'integration.secret_grace_ended')
    expect(entry).toMatchObject({ target: { integration_id: t.integrationId } })
    expect(JSON.stringify(entry)).not.toMatch(/whsec_/)

    // a real delivery: one signature, made with the new secret; the old one no longer verifies
    const after = await delivered()
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(verifies(fresh, after)).toBe(true)
    expect(verifies(t.signingSecret, after)).toBe(false)

    // nothing left to end: the question leads back, a repeated post changes nothing and says nothing
    expect((await page(portal, `${base()}/secret/end-grace`, cookie)).statusCode).toBe(303)
    const again = await formPost(portal, `${base()}/secret/end-grace`, cookie, { confirm: 'yes' })
    expect(again.headers.location).toBe(`${base()}#secret`)
  })

  it("another account's session cannot end this webhook's grace (404, nothing changed)", async () => {
    await followReveal(portal, await formPost(portal, `${base()}/secret/rotate`, cookie, { grace_seconds: '3600' }), cookie)
    const other = await createTestTenant(deps, { ...ACCOUNT_ONLY })
    try {
      const theirs = await signIn(portal, other.account.id)
      expect((await page(portal, `${base()}/secret/end-grace`, theirs)).statusCode).toBe(404)
      expect((await formPost(portal, `${base()}/secret/end-grace`, theirs, { confirm: 'yes' })).statusCode).toBe(404)
      expect((await deps.tenants.getIntegration(t.integrationId))!.signing_secrets).toHaveLength(2)
    } finally {
      await other.cleanup()
    }
  })
})
