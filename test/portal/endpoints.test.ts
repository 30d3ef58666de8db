import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * Endpoints like a product (issue 22 job 5) through real HTTP requests to the portal: a name and a
 * description, health at a glance from the delivery log, delete behind a confirmation step (303
 * after, audited, queued deliveries ending without a request), confirmation of the other
 * destructive actions (disable, rotate with no grace), and the account-wide banner.
 */
describe('portal: webhook endpoints as a product', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: 'https://hooks.example.com/base' } }))
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const addWebhook = async (fields: Record<string, string>) => {
    const res = await formPost(portal, '/portal/webhooks', cookie, { payload_version: '2', ...fields })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(303)
    const all = await deps.tenants.listIntegrations(t.account.id)
    return all.find((i) => i.url === fields.url)!
  }

  it('names and describes an endpoint; the list and the page show the name, the description, and edits keep them', async () => {
    const i = await addWebhook({ url: 'https://hooks.example.com/crm', name: '  CRM sync  ', description: 'Pushes identified visitors to the CRM' })
    // stored trimmed (mutation: the form's name not passed to the domain -> null)
    expect(i).toMatchObject({ name: 'CRM sync', description: 'Pushes identified visitors to the CRM' })
    const list = await page(portal, '/portal/webhooks', cookie)
    expect(list.body).toContain('>CRM sync</a>')
    expect(list.body).toContain('Pushes identified visitors to the CRM')
    const detail = await page(portal, `/portal/webhooks/${i.id}`, cookie)
    expect(detail.body).toContain('<title>Webhook CRM sync')
    // an edit that empties the description clears it, keeps the name
    const saved = await formPost(portal, `/portal/webhooks/${i.id}`, cookie, {
      url: i.url,
      payload_version: '2',
      active: 'on',
      name: 'CRM sync',
      description: '',
    })
    expect(saved.statusCode).toBe(303)
    expect(await deps.tenants.getIntegration(i.id)).toMatchObject({ name: 'CRM sync', description: null })
    // too long: refused in words, nothing changed
    const long = await formPost(portal, `/portal/webhooks/${i.id}`, cookie, { url: i.url, payload_version: '2', active: 'on', name: 'x'.repeat(101) })
    expect(long.statusCode).toBe(400)
    expect(long.body).toContain('the name has at most 100 characters')
    expect((await deps.tenants.getIntegration(i.id))!.name).toBe('CRM sync')
  })

  it('shows health at a glance: success rate, last success and failure, a 24-hour sparkline with a text alternative', async () => {
    const i = await addWebhook({ url: 'https://hooks.example.com/health', name: 'Health' })
    const now = Date.now()
    const at = (msAgo: number) => new Date(now - msAgo).toISOString()
    // each delivery recorded, and each of its attempts told to the delivery listeners, as the
    // delivery task handler does (health is kept by its listener as the attempts happen)
    const put = async (id: string, attempts: Array<[number | null, number]>, createdAgo: number) => {
      const record: DeliveryRecord = {
        id,
        account_id: t.account.id,
        integration_id: i.id,
        event_id: `evt_${id}`,
        status: attempts.at(-1)![0] === 200 ? 'succeeded' : 'failed',
        attempts: attempts.map(([code, ago], n) => ({
          attempt: n + 1,
          at: at(ago),
          status_code: code,
          error: code ? null : 'timeout',
          latency_ms: 5,
          response_excerpt: null,
        })),
        body: '{}',
        next_attempt_at: null,
        created_at: at(createdAgo),
        updated_at: at(createdAgo),
      }
      await deps.deliveries.put(record)
      for (const attempt of record.attempts) {
        const outcome = attempt.status_code === 200 ? 'succeeded' : 'failed'
        for (const l of deps.listeners.delivery) await l.onDeliveryAttempted({ outcome, delivery: record, attempt, target: null, maxAttempts: 8 }, deps)
      }
      await deps.listeners.flush()
    }
    await put(
      `dlv_h1_${i.id}`,
      [
        [500, 3 * 3_600_000],
        [200, 2 * 3_600_000],
      ],
      3 * 3_600_000,
    )
    await put(`dlv_h2_${i.id}`, [[200, 60_000]], 60_000)
    await put(`dlv_h3_${i.id}`, [[null, 30_000]], 30_000)
    // older than 24 h: in neither the rate nor the sparkline
    await put(`dlv_h4_${i.id}`, [[500, 30 * 3_600_000]], 30 * 3_600_000)
    const detail = (await page(portal, `/portal/webhooks/${i.id}`, cookie)).body
    // 2 of 4 attempts in the last 24 h answered 200 (mutation: counting the 30-hour-old attempt -> 40 %)
    expect(detail).toMatch(/id="health-rate">50 %<\/dd>/)
    expect(detail).toContain(`datetime="${at(60_000)}"`)
    expect(detail).toContain(`datetime="${at(30_000)}"`)
    // the sparkline says the same in words (mutation: aria-label dropped -> no text alternative)
    expect(detail).toMatch(/<svg class="spark" role="img" aria-label="Last 24 hours: 2 attempts succeeded, 2 failed, in 2 of 24 hours\."/)
    const list = (await page(portal, '/portal/webhooks', cookie)).body
    expect(list).toContain('50 %')
  })

  it('deletes only after the confirmation step; 303 after; audited; its queued delivery ends without a request', async () => {
    const i = await addWebhook({ url: 'https://hooks.example.com/delete-me', name: 'Old endpoint' })
    const queued = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: i.id,
      eventId: 'evt_queued',
      body: '{}',
      now: new Date().toISOString(),
    })

    const ask = await page(portal, `/portal/webhooks/${i.id}/delete`, cookie)
    expect(ask.statusCode).toBe(200)
    expect(ask.body).toContain('Delete this webhook?')
    expect(ask.body).toContain('name="confirm" value="yes"')
    // a post without the confirmation is sent to the question (mutation: delete on the first post -> gone here)
    const unconfirmed = await formPost(portal, `/portal/webhooks/${i.id}/delete`, cookie, {})
    expect(unconfirmed.statusCode).toBe(303)
    expect(unconfirmed.headers.location).toBe(`/portal/webhooks/${i.id}/delete`)
    expect(await deps.tenants.getIntegration(i.id)).not.toBeNull()

    const confirmed = await formPost(portal, `/portal/webhooks/${i.id}/delete`, cookie, { confirm: 'yes' })
    expect(confirmed.statusCode).toBe(303)
    expect(confirmed.headers.location).toBe('/portal/webhooks?flash=integration-deleted')
    expect(await deps.tenants.getIntegration(i.id)).toBeNull()
    expect((await page(portal, `/portal/webhooks/${i.id}`, cookie)).statusCode).toBe(404)
    const entry = (await listAudit(deps, t.account.id, { limit: 50 })).data.find((e) => e.action === 'integration.deleted')
    expect(entry).toMatchObject({ target: { integration_id: i.id }, details: { host: 'hooks.example.com', name: 'Old endpoint' } })

    // the dispatcher treats the queued delivery as done: failed, no request, no retry scheduled
    const sent: string[] = []
    const original = deps.webhookSender.post.bind(deps.webhookSender)
    deps.webhookSender.post = async (url, body, headers) => {
      sent.push(url)
      return original(url, body, headers)
    }
    const outcome = await createDeliveryTaskHandler(deps)(Buffer.from(JSON.stringify({ v: 1, delivery_id: queued.id, seq: 1, attempt: 1 })))
    deps.webhookSender.post = original
    expect(outcome).toBe('failed')
    expect(sent).toEqual([])
    expect(await deps.deliveries.get(queued.id)).toMatchObject({ status: 'failed', next_attempt_at: null })
    // another account's session cannot delete (404, nothing changed)
    const other = await createTestTenant(deps, { ...ACCOUNT_ONLY })
    try {
      const theirs = await formPost(portal, `/portal/webhooks/${t.integration.id}/delete`, await signIn(portal, other.account.id), { confirm: 'yes' })
      expect(theirs.statusCode).toBe(404)
      expect(await deps.tenants.getIntegration(t.integration.id)).not.toBeNull()
    } finally {
      await other.cleanup()
    }
  })

  it('disabling and rotating with no grace ask first; the banner names a disabled or failing endpoint on every screen', async () => {
    const i = await addWebhook({ url: 'https://hooks.example.com/confirm', name: 'Confirm me' })
    const secretBefore = (await deps.tenants.getIntegration(i.id))!.signing_secrets[0]!.secret
    const rotate = await formPost(portal, `/portal/webhooks/${i.id}/secret/rotate`, cookie, { grace_seconds: '0' })
    // mutation: no confirmation for "stop it now" -> a reveal page and a new secret here
    expect(rotate.statusCode).toBe(303)
    expect(rotate.headers.location).toBe(`/portal/webhooks/${i.id}/secret/rotate-now`)
    const rotateAsk = await page(portal, `/portal/webhooks/${i.id}/secret/rotate-now`, cookie)
    expect(rotateAsk.body).toContain('Rotate the secret and stop the old one now?')
    expect(rotateAsk.body).toContain('name="grace_seconds" value="0"')
    expect((await deps.tenants.getIntegration(i.id))!.signing_secrets[0]!.secret).toBe(secretBefore)

    // unticking "active" saves the other fields with the webhook still on, then asks (303, never a 200 to a post)
    const off = { url: i.url, payload_version: '2', name: 'Confirm me, renamed' }
    const saved = await formPost(portal, `/portal/webhooks/${i.id}`, cookie, off)
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toBe(`/portal/webhooks/${i.id}/disable?flash=integration-updated`)
    // mutation: disabling on the first post -> active false here
    expect(await deps.tenants.getIntegration(i.id)).toMatchObject({ active: true, name: 'Confirm me, renamed' })
    const ask = await page(portal, `/portal/webhooks/${i.id}/disable?flash=integration-updated`, cookie)
    expect(ask.statusCode).toBe(200)
    expect(ask.body).toContain('Disable this webhook?')
    expect(ask.body).toContain('It is still on.')
    // a post to it without the confirmation only leads back to the question
    const crafted = await formPost(portal, `/portal/webhooks/${i.id}/disable`, cookie, {})
    expect(crafted.headers.location).toBe(`/portal/webhooks/${i.id}/disable`)
    expect((await deps.tenants.getIntegration(i.id))!.active).toBe(true)
    const done = await formPost(portal, `/portal/webhooks/${i.id}/disable`, cookie, { confirm: 'yes' })
    expect(done.statusCode).toBe(303)
    expect(await deps.tenants.getIntegration(i.id)).toMatchObject({ active: false, name: 'Confirm me, renamed' })
    const entry = (await listAudit(deps, t.account.id, { limit: 50 })).data.find((e) => e.action === 'integration.updated' && e.details.active === false)
    expect(entry).toBeDefined()
    // the question of an endpoint already off leads back to its page
    expect((await page(portal, `/portal/webhooks/${i.id}/disable`, cookie)).statusCode).toBe(303)

    // the banner, on another screen of the account (mutation: the hook not registered -> absent)
    const settings = (await page(portal, '/portal/settings', cookie)).body
    expect(settings).toContain('id="endpoint-banner"')
    expect(settings).toContain('A webhook is disabled')
    expect(settings).toContain(`href="/portal/webhooks/${i.id}">Confirm me, renamed</a>`)
    await deps.tenants.updateIntegration(t.integration.id, { failing: { since: new Date().toISOString(), percent: 70 } })
    const again = (await page(portal, '/portal/settings', cookie)).body
    expect(again).toContain('A webhook keeps failing')
    expect(again).toContain('(70 % of the failure threshold)')
  })
})
