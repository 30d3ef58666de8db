import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { signIn } from './support.ts'
import { closeSignedInPortal, formPost, openSignedInPortal, page, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

/**
 * What a webhook's page says after the tenant acts, and what its words promise (issue 29, D9 and
 * D12): the delivery log shows each delivery's created time and the debuggers' badges; "Send
 * test event" lands on the log with the new delivery in it (or says it is on its way, with a
 * link); the URL hint says what this deployment accepts; the event-id hint says how `webhook-id`
 * is made from the event id, as a receiver gets it.
 */
describe('portal: a webhook page after an action, and its hints', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let testDeliveryId: string

  beforeAll(async () => {
    receiver = await startReceiver((r) => ({ status: r.body.includes('"evt_down"') ? 500 : 200 }))
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: receiver.url } }))
  })
  afterAll(async () => {
    await closeSignedInPortal({ deps, portal, t })
    await receiver?.close()
  })

  /** the log's row of one event id, from `<tr>` to `</tr>` */
  const rowOf = (body: string, eventId: string) => {
    const at = body.indexOf(`title="${eventId}"`)
    expect(at, `a row for ${eventId}`).toBeGreaterThan(0)
    return body.slice(body.lastIndexOf('<tr>', at), body.indexOf('</tr>', at))
  }

  it('the log shows when each delivery was made, and its status and answer as the debuggers badge them', async () => {
    const now = Date.now()
    const ok = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integrationId,
      eventId: 'evt_up',
      body: '{"id":"evt_up"}',
      now: new Date(now - 120_000).toISOString(),
    })
    const down = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integrationId,
      eventId: 'evt_down',
      body: '{"id":"evt_down"}',
      now: new Date(now - 60_000).toISOString(),
    })
    await drainDueTasks(deps)
    const body = (await page(portal, `/portal/webhooks/${t.integrationId}`, cookie)).body
    const up = rowOf(body, 'evt_up')
    // mutation: no Created column -> no <time> of the creation in the row
    expect(up).toContain(`<time class="ago" datetime="${ok.created_at}"`)
    expect(up).toContain('<span class="badge ok">succeeded</span>')
    expect(up).toContain('<span class="badge ok">200</span>')
    const failing = rowOf(body, 'evt_down')
    expect(failing).toContain(`<time class="ago" datetime="${down.created_at}"`)
    expect(failing).toContain('<span class="badge warn">retrying</span>')
    expect(failing).toContain('<span class="badge bad">500</span>')
    expect(body).toContain('<th scope="col">Created</th>')
    // the delivery debugger shows the same status badge (one helper for both)
    const debug = (await page(portal, `/portal/webhooks/${t.integrationId}/deliveries/${down.id}`, cookie)).body
    expect(debug).toContain('<dt>Status</dt><dd><span class="badge warn">retrying</span></dd>')
  })

  it('"Send test event" lands on the log with the new delivery marked, focused there, the result said once', async () => {
    const sent = await formPost(portal, `/portal/webhooks/${t.integrationId}/test`, cookie)
    expect(sent.statusCode).toBe(303)
    const location = String(sent.headers.location)
    // mutation: the old redirect (the page's top, no delivery named) fails here
    const m = /^\/portal\/webhooks\/([^?#]+)\?sent=(dlv_[A-Za-z0-9_-]+)&flash=test-sent#delivery-log$/.exec(location)
    expect(m, location).not.toBeNull()
    const delivery = (await deps.deliveries.get(m![2]!))!
    testDeliveryId = delivery.id
    expect(delivery.event_id).toMatch(/^evt_test_/)
    const landed = (await page(portal, location.replace(/#.*$/, ''), cookie)).body
    expect(landed).toContain('<div id="delivery-log" tabindex="-1">')
    expect(landed).toContain('Test event sent: it is the row marked “just sent”.')
    const row = rowOf(landed, delivery.event_id)
    expect(row).toContain('<span class="badge">just sent</span>')
    expect(row).toContain('<span class="badge">test</span>')
    // the newest row, first in the log
    const log = landed.slice(landed.indexOf('id="delivery-log"'))
    expect(log.indexOf(`title="${delivery.event_id}"`)).toBeLessThan(log.indexOf('title="evt_down"'))
    // said once, in the log: not again in the flash at the top of the page
    expect(landed).not.toContain('Test event queued.')
    // only the delivery just made is marked
    expect(landed.match(/just sent<\/span>/g)).toHaveLength(1)
  })

  it('when the delivery is not in the log it shows, it says it was sent, with a link to reload', async () => {
    const res = await page(portal, `/portal/webhooks/${t.integrationId}?sent=dlv_notYetListed0123456789ab`, cookie)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Test event sent: it is not in the log yet.')
    expect(res.body).toContain(`<a href="/portal/webhooks/${t.integrationId}?sent=dlv_notYetListed0123456789ab#delivery-log">Reload to see it</a>`)
    expect(res.body).not.toContain('just sent</span>')
    // a `sent` that is no delivery id is refused, like any other bad query
    expect((await page(portal, `/portal/webhooks/${t.integrationId}?sent=%3Cb%3E`, cookie)).statusCode).toBe(400)
  })

  it('a replay lands on the log too', async () => {
    const replay = await formPost(portal, `/portal/webhooks/${t.integrationId}/deliveries/${testDeliveryId}/replay`, cookie)
    expect(replay.statusCode).toBe(303)
    expect(replay.headers.location).toBe(`/portal/webhooks/${t.integrationId}?flash=delivery-replayed#delivery-log`)
  })

  it("the event-id hint says what the code does: webhook-id is the event id, or msg_sha256_… derived from an id with a '.'", async () => {
    const eventId = 'visit.2026-11-28 a'
    await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integrationId,
      eventId,
      body: JSON.stringify({ id: eventId }),
      now: new Date().toISOString(),
    })
    await drainDueTasks(deps)
    const got = receiver.requests.find((r) => r.headers['x-service-idempotency-key'] === eventId)!
    // as a receiver gets it: the body id and the idempotency key are the event id, webhook-id is derived
    expect(JSON.parse(got.body).id).toBe(eventId)
    expect(got.headers['x-service-idempotency-key']).toBe(eventId)
    const webhookId = String(got.headers['webhook-id'])
    expect(webhookId).toMatch(/^msg_sha256_[A-Za-z0-9_-]{43}$/)
    // the log's event-id filter finds it by the body id, not by the webhook-id
    const byBodyId = (await page(portal, `/portal/webhooks/${t.integrationId}?event_id=${encodeURIComponent(eventId)}`, cookie)).body
    expect(rowOf(byBodyId, eventId)).toMatch(/<td[\s>]/)
    const byWebhookId = (await page(portal, `/portal/webhooks/${t.integrationId}?event_id=${webhookId}`, cookie)).body
    expect(byWebhookId).toContain(`No deliveries for event ${webhookId}.`)
    // and the hint says so (mutation: the old "the exact webhook-id your endpoint received")
    expect(byBodyId).not.toContain('the exact <code>webhook-id</code> your endpoint received')
    expect(byBodyId).toContain("Event id: the event's <code>id</code> in the body (the visit id), also sent as <code>X-Service-Idempotency-Key</code>.")
    expect(byBodyId).toContain('unless the id holds a <code>.</code>, a space or a character outside printable ASCII')
    expect(byBodyId).toContain('then <code>webhook-id</code> is <code>msg_sha256_</code>')
  })

  it('the URL hint says loopback receivers are accepted where they are, and the form accepts one', async () => {
    for (const path of ['/portal/webhooks', `/portal/webhooks/${t.integrationId}`]) {
      const body = (await page(portal, path, cookie)).body
      expect(body, path).toContain('An https or http URL of a public host, or of this machine (localhost, 127.0.0.1)')
      expect(body, path).not.toContain('An https URL of a public host.')
    }
    const added = await formPost(portal, '/portal/webhooks', cookie, { url: 'http://127.0.0.1:9/hint', payload_version: '2' })
    expect(added.statusCode, added.body.slice(0, 300)).toBe(303)
  })
})

describe('portal: the URL hint of a deployment that refuses loopback receivers', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    deps = await createTestDeps({ config: { allowLoopbackWebhooks: false } })
    portal = await buildPortal(deps)
    t = await createTestTenant(deps, { ...ACCOUNT_ONLY })
    cookie = await signIn(portal, t.account.id)
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  it('says loopback is refused, and the form refuses it', async () => {
    const body = (await page(portal, '/portal/webhooks', cookie)).body
    // mutation: one hint whatever the deployment -> the loopback words here
    expect(body).toContain('<p class="hint" id="new-url-hint">An https or http URL of a public host: private, internal and loopback addresses are refused.</p>')
    expect(body).toContain('aria-describedby="new-url-hint"')
    const refused = await formPost(portal, '/portal/webhooks', cookie, { url: 'http://127.0.0.1:9/hint', payload_version: '2' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('address not allowed (loopback)')
    const plainHttp = await formPost(portal, '/portal/webhooks', cookie, { url: 'http://hooks.example.com/plain-http', payload_version: '2' })
    expect(plainHttp.statusCode, plainHttp.body.slice(0, 300)).toBe(303)
  })
})
