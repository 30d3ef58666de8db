import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { recordingQueue, type Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { closeSignedInPortal, formPost, openSignedInPortal, page, type SignedInPortal } from './screens-support.ts'
import { followReveal, secretIn } from './reveal-support.ts'

/**
 * Settings, "Alerts" (issue 29, alerts outside the portal), as a tenant uses it (app.inject): the
 * email and the alert webhook URL saved with redirects and flashes, refused with the reason next
 * to the field (nothing stored), the alert webhook's secret shown once, the change audited, and
 * "Send a test alert" reaching the mail folder.
 */
describe('portal screen: settings, alerts', () => {
  let s: SignedInPortal
  const entries = async () => (await s.deps.auditLog.list(s.t.account.id, { limit: 50 })).data
  const stored = async () => (await s.deps.tenants.getAccount(s.t.account.id))!.alerts

  beforeAll(async () => {
    s = await openSignedInPortal(ACCOUNT_ONLY)
  })
  afterAll(async () => {
    await closeSignedInPortal(s)
  })

  it('shows the section with its form and test button, empty at first', async () => {
    const shown = await page(s.portal, '/portal/settings', s.cookie)
    expect(shown.statusCode).toBe(200)
    expect(shown.body).toContain('<h2 id="alerts-h">Alerts</h2>')
    expect(shown.body).toMatch(/<form method="post" action="\/portal\/settings\/alerts">/)
    expect(shown.body).toContain('id="alert-email" name="email" value=""')
    expect(shown.body).toContain('id="alert-test"')
  })

  it('refuses an address that is not one address, and a URL a webhook could not have, next to each field; nothing is stored', async () => {
    for (const email of ['not an address', 'a@b.example, c@d.example', 'ops@example.com\r\nBcc: x@y.example']) {
      const res = await formPost(s.portal, '/portal/settings/alerts', s.cookie, { email, url: '' })
      expect(res.statusCode, email).toBe(400)
      expect(res.body).toContain('id="alert-email-error"')
      expect(res.body).toContain('Give one email address, such as ops@example.com.')
      expect(res.body).toContain('aria-invalid="true"')
    }
    // the same rules as a webhook endpoint (ssrf.ts): a private address, another scheme, credentials
    for (const [url, reason] of [
      ['http://10.0.0.7/alerts', 'address not allowed'],
      ['ftp://alerts.example.com/', 'scheme must be https or http'],
      ['https://user:pw@alerts.example.com/', 'credentials in URL are not allowed'],
    ] as const) {
      const res = await formPost(s.portal, '/portal/settings/alerts', s.cookie, { email: 'ops@example.com', url })
      expect(res.statusCode, url).toBe(400)
      expect(res.body).toContain('id="alert-url-error"')
      expect(res.body).toContain(reason)
      // what was typed is kept for correction
      expect(res.body).toContain('value="ops@example.com"')
    }
    expect(await stored()).toBeUndefined()
  })

  it('a test alert with nothing set: a 409 page that says what to do', async () => {
    const res = await formPost(s.portal, '/portal/settings/alerts/test', s.cookie)
    expect(res.statusCode).toBe(409)
    expect(res.body).toContain('Set an email address or an alert webhook URL first')
  })

  it('saves an email and a URL: the secret of the alert webhook shown once, the change audited; the same URL again keeps it', async () => {
    const saved = await formPost(s.portal, '/portal/settings/alerts', s.cookie, { email: ' ops@example.com ', url: 'https://hooks.example.com/alerts' })
    const { location, body } = await followReveal(s.portal, saved, s.cookie)
    const secret = secretIn(body)
    expect(secret).toMatch(/^whsec_/)
    expect(body).toContain('Signing secret of the alert webhook https://hooks.example.com/alerts')
    // shown once
    expect((await page(s.portal, location, s.cookie)).statusCode).toBe(410)
    expect(await stored()).toMatchObject({ email: 'ops@example.com', webhook: { url: 'https://hooks.example.com/alerts', signing_secret: secret } })
    const entry = (await entries()).find((e) => e.action === 'alerts.set')
    expect(entry).toMatchObject({ details: { email: 'ops@example.com', webhook_host: 'hooks.example.com' } })
    expect(JSON.stringify(await entries())).not.toContain(secret)

    const shown = await page(s.portal, '/portal/settings', s.cookie)
    expect(shown.body).toContain('value="ops@example.com"')
    expect(shown.body).toContain('value="https://hooks.example.com/alerts"')
    expect(shown.body).not.toContain(secret)

    // the same URL: saved with a flash, the secret kept (mutation: a new secret each save -> a reveal)
    const again = await formPost(s.portal, '/portal/settings/alerts', s.cookie, { email: 'team@example.com', url: 'https://hooks.example.com/alerts' })
    expect(again.statusCode).toBe(303)
    expect(again.headers.location).toBe('/portal/settings?flash=alerts-saved')
    expect((await page(s.portal, '/portal/settings?flash=alerts-saved', s.cookie)).body).toContain('Alerts saved.')
    expect(await stored()).toMatchObject({ email: 'team@example.com', webhook: { signing_secret: secret } })
  })

  it('"Send a test alert": a [Test] email in the mail folder and the alert webhook queued; audited', async () => {
    const res = await formPost(s.portal, '/portal/settings/alerts/test', s.cookie)
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/portal/settings?flash=alert-test-sent')
    const dir = s.deps.config.alertMailDir
    // quoted-printable soft breaks undone (nodemailer wraps lines over 76 characters)
    const mails = existsSync(dir) ? readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8').replace(/=\r?\n/g, '')) : []
    const mine = mails.filter((m) => m.includes('To: team@example.com'))
    expect(mine).toHaveLength(1)
    expect(mine[0]).toContain('Subject: [Test] Webhook endpoint Example endpoint is failing')
    expect(mine[0]).toContain('This is a test alert')
    expect((await entries()).find((e) => e.action === 'alerts.test_sent')).toMatchObject({ details: { webhook: 'queued', email: 'sent' } })
  })

  it('clearing both fields removes the alerts', async () => {
    const res = await formPost(s.portal, '/portal/settings/alerts', s.cookie, { email: '', url: '' })
    expect(res.statusCode).toBe(303)
    expect(await stored()).toEqual({ email: null, webhook: null })
  })
})

// mutation: drop consumeWebhookActionQuota from the test alert route -> the 6th answers 303
describe('portal screen: settings, alerts: "Send a test alert" is bounded like a test event', () => {
  // 10 s into a minute: the fixed window ends in 50 s, and nothing here waits (a manual clock)
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 10, 10))
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let portal: Injectable
  let t: StoredTenant

  beforeAll(async () => {
    deps = await createTestDeps({ clock, queue: recordingQueue().queue })
    portal = await buildPortal(deps)
    t = await createTestTenant(deps, ACCOUNT_ONLY)
    await deps.tenants.updateAccount(t.account.id, { alerts: { email: 'limits@example.com', webhook: null } })
  })
  afterAll(async () => {
    await t?.cleanup()
    await portal?.close()
    await deps?.cleanup()
  })

  it('past 5 a minute: a 429 page with Retry-After that says so, and no email; the next minute works', async () => {
    const cookie = await signIn(portal, t.account.id)
    for (let i = 0; i < 5; i++) expect((await formPost(portal, '/portal/settings/alerts/test', cookie)).statusCode).toBe(303)
    const mails = () => readdirSync(deps.config.alertMailDir).length
    expect(mails()).toBe(5)
    const refused = await formPost(portal, '/portal/settings/alerts/test', cookie)
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('60')
    expect(refused.body).toContain('Too many test alerts for this account: at most 5 a minute.')
    expect(mails()).toBe(5)
    clock.advance(60_000)
    expect((await formPost(portal, '/portal/settings/alerts/test', cookie)).statusCode).toBe(303)
    expect(mails()).toBe(6)
  })
})
