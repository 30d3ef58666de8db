import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { FAILURE_THRESHOLD } from '@lsv/shared/domain/operations/endpoint-failing.ts'
import { generateSigningSecret } from '@lsv/shared/domain/webhooks/signing.ts'
import { EndpointAlert } from '@lsv/shared/contract/endpoint-alert.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { signIn } from '../portal/support.ts'
import { formPost } from '../portal/screens-support.ts'
import { followReveal, secretIn } from '../portal/reveal-support.ts'
import { drainDueTasks, startReceiver, type Answer, type ReceivedRequest } from './harness.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>
const checkAlert = messageCheck(EndpointAlert)
/** a message's quoted-printable soft breaks and escapes undone (nodemailer wraps lines over 76 characters) */
const unQuotedPrintable = (m: string) => m.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))

/**
 * Endpoint alerts outside the portal (issue 29), as a tenant meets them: the alert email and the
 * alert webhook are set on the portal's Settings screen (real form posts, the secret read from its
 * one-time page), an endpoint fails until `endpoint.failing`, and then the mail folder holds one
 * message naming the endpoint with a portal link, and a local receiver on 127.0.0.1 gets one
 * Standard-Webhooks POST that verifies with the secret shown once. Once per change of state: the
 * next steps of the threshold send nothing more; a 200 sends `endpoint.recovered`.
 */
describe('endpoint alerts: an email file and a signed POST per change of an endpoint state', () => {
  let deps: Deps
  let clock: ManualClock
  let portal: Injectable
  let endpoint: Awaited<ReturnType<typeof startReceiver>>
  let alerts: Awaited<ReturnType<typeof startReceiver>>
  let answer: () => Answer = () => ({ status: 500 })
  let alertAnswer: () => Answer = () => ({ status: 200 })
  let mailDir = ''
  const tenants: StoredTenant[] = []

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    endpoint = await startReceiver(() => answer())
    alerts = await startReceiver(() => alertAnswer())
    deps = await createTestDeps({ clock })
    mailDir = deps.config.alertMailDir
    portal = await buildPortal(deps)
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await portal?.close()
    await endpoint?.close()
    await alerts?.close()
    await deps?.cleanup()
  })

  /** a tenant with one endpoint, and its alerts set on the Settings screen: the secret shown once */
  async function tenantWithAlerts(email: string): Promise<{ t: StoredTenant; secret: string }> {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: `${endpoint.url}?token=receiver-own` } })
    tenants.push(t)
    const cookie = await signIn(portal, t.account.id)
    const saved = await formPost(portal, '/portal/settings/alerts', cookie, { email, url: alerts.url })
    const { body } = await followReveal(portal, saved, cookie)
    return { t, secret: secretIn(body) }
  }

  async function deliveries(t: StoredTenant, n: number) {
    for (let i = 0; i < n; i++) {
      const eventId = `evt_${Math.random().toString(36).slice(2)}`
      await createDelivery(deps, {
        accountId: t.account.id,
        integrationId: t.integration.id,
        eventId,
        body: JSON.stringify({ id: eventId }),
        now: new Date(clock.now()).toISOString(),
      })
      clock.advance(1000)
    }
    await drainDueTasks(deps)
  }

  const verified = (r: ReceivedRequest, secret: string): EndpointAlert => {
    // over the exact bytes received, with the secret the portal showed once (mutation: another secret -> throws)
    const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as unknown
    const checked = checkAlert(payload)
    if (!checked.ok) throw new Error(checked.reason)
    expect(r.headers['webhook-id']).toBe(checked.value.id)
    return checked.value
  }

  /** the messages to `address` in the mail folder, their quoted-printable body lines unfolded */
  const mailsTo = (address: string): string[] =>
    existsSync(mailDir)
      ? readdirSync(mailDir)
          .filter((f) => f.endsWith('.eml'))
          .map((f) => unQuotedPrintable(readFileSync(join(mailDir, f), 'utf8')))
          .filter((m) => m.includes(`To: ${address}`))
      : []
  /** alerts POSTed about one account (another test's endpoint may change state meanwhile) */
  const alertsOf = (accountId: string) => alerts.requests.filter((r) => (JSON.parse(r.body) as { account_id: string }).account_id === accountId)

  it('an endpoint that starts failing: one email with the endpoint and a portal link, one signed POST; nothing more per attempt; recovered once', async () => {
    const email = `ops-${Math.random().toString(36).slice(2)}@example.com`
    const { t, secret } = await tenantWithAlerts(email)
    alerts.requests.length = 0
    answer = () => ({ status: 500 })
    await deliveries(t, FAILURE_THRESHOLD / 2 - 1)
    expect(alerts.requests).toHaveLength(0)
    expect(mailsTo(email)).toHaveLength(0)

    await deliveries(t, 1)
    expect(alerts.requests).toHaveLength(1)
    const alert = verified(alerts.requests[0]!, secret)
    expect(alert).toMatchObject({
      v: 1,
      type: 'endpoint.failing',
      account_id: t.account.id,
      test: false,
      endpoint: { id: t.integration.id },
      consecutive_failures: FAILURE_THRESHOLD / 2,
      threshold: FAILURE_THRESHOLD,
      last_error: 'HTTP 500',
      portal_url: `${deps.config.portalBaseUrl}/portal/webhooks/${t.integration.id}`,
    })
    // the endpoint's URL, its query (the receiver's own token) redacted as in every sink
    expect(alert.type === 'endpoint.failing' && alert.endpoint.url).toBe(`${endpoint.url}?[redacted]`)
    expect(alerts.requests[0]!.body).not.toContain('receiver-own')

    const mails = mailsTo(email)
    expect(mails).toHaveLength(1)
    expect(mails[0]).toContain('Subject: Webhook endpoint')
    expect(mails[0]).toContain(`Endpoint: ${endpoint.url}?[redacted]`)
    expect(mails[0]).toContain(`See it in the portal: ${deps.config.portalBaseUrl}/portal/webhooks/${t.integration.id}`)
    // header names are case-insensitive (nodemailer writes X-Alert-ID)
    expect(mails[0]).toMatch(new RegExp(`^X-Alert-Id: ${alert.id}$`, 'im'))

    // 70 % and 90 % of the threshold are the same state: no second alert (mutation: tell per step -> 2, 3)
    await deliveries(t, Math.ceil(0.9 * FAILURE_THRESHOLD) - FAILURE_THRESHOLD / 2)
    expect((await deps.tenants.getIntegration(t.integration.id))!.failing?.percent).toBe(90)
    expect(alerts.requests).toHaveLength(1)
    expect(mailsTo(email)).toHaveLength(1)

    // it works again: endpoint.recovered, once
    answer = () => ({ status: 200 })
    await deliveries(t, 2)
    expect(alerts.requests).toHaveLength(2)
    expect(verified(alerts.requests[1]!, secret)).toMatchObject({ type: 'endpoint.recovered', endpoint: { id: t.integration.id }, since: alert.since })
    expect(mailsTo(email)).toHaveLength(2)
  })

  it('an endpoint answering 410: endpoint.disabled by email and by the alert webhook', async () => {
    const email = `ops-${Math.random().toString(36).slice(2)}@example.com`
    const { t, secret } = await tenantWithAlerts(email)
    answer = () => ({ status: 410 })
    await deliveries(t, 1)
    expect(alertsOf(t.account.id)).toHaveLength(1)
    expect(verified(alertsOf(t.account.id)[0]!, secret)).toMatchObject({
      type: 'endpoint.disabled',
      reason: 'endpoint answered 410',
      endpoint: { id: t.integration.id },
    })
    expect(mailsTo(email)).toHaveLength(1)
    expect(mailsTo(email)[0]).toContain('was disabled')
  })

  it('an alert receiver that fails and a mail folder that cannot be written break no delivery: the endpoint keeps its schedule and its health', async () => {
    // deps of their own whose mail folder's path is taken by a file: every email fails to be written
    const blocked = join(deps.config.dataDir, `not-a-folder-${Math.random().toString(36).slice(2)}`)
    writeFileSync(blocked, 'a file')
    const broken = await createTestDeps({ clock, env: { ALERT_MAIL_DIR: blocked } })
    alerts.requests.length = 0
    alertAnswer = () => ({ status: 500 })
    answer = () => ({ status: 500 })
    try {
      // its data goes with the deps' own folder
      const t = await createTestTenant(broken, { ...ACCOUNT_ONLY, integration: { url: endpoint.url } })
      await broken.tenants.updateAccount(t.account.id, {
        alerts: {
          email: 'ops@example.com',
          webhook: { url: alerts.url, signing_secret: generateSigningSecret(), created_at: new Date(clock.now()).toISOString() },
        },
      })
      const before = endpoint.requests.length
      for (let i = 0; i < FAILURE_THRESHOLD / 2; i++) {
        await createDelivery(broken, {
          accountId: t.account.id,
          integrationId: t.integration.id,
          eventId: `evt_b_${i}_${Math.random().toString(36).slice(2)}`,
          body: '{}',
          now: new Date(clock.now()).toISOString(),
        })
      }
      await drainDueTasks(broken)
      // every delivery was attempted and recorded as retrying, and the endpoint is marked failing
      expect(endpoint.requests.length - before).toBe(FAILURE_THRESHOLD / 2)
      const listed = await broken.deliveries.list(t.integration.id, { limit: 50 })
      expect(listed.map((d) => d.status)).toEqual(Array(FAILURE_THRESHOLD / 2).fill('retrying'))
      expect((await broken.tenants.getIntegration(t.integration.id))!.failing?.percent).toBe(50)
      // the alert webhook was tried and answered 500: its delivery waits for its retry, like any other
      expect(alerts.requests).toHaveLength(1)
      // and the endpoint's next attempts still run on their schedule
      clock.advance(10_000)
      await drainDueTasks(broken)
      expect(endpoint.requests.length - before).toBe(FAILURE_THRESHOLD)
      expect(alerts.requests).toHaveLength(2)
    } finally {
      alertAnswer = () => ({ status: 200 })
      await broken.cleanup()
    }
  })
})
