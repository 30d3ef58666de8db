import { createHmac } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { InvalidVisitEvent, validateVisitEvent } from '@lsv/shared/domain/visits/parse.ts'
import { createDelivery, replayDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { OPENAPI_FILE } from '@lsv/shared/contract/generated-files.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { drainDueTasks, startReceiver } from './harness.ts'

/**
 * Standard Webhooks signs `<webhook-id>.<ts>.<body>`, so a visit id with `.` goes out as a derived
 * message id, while the body `id` and `X-Service-Idempotency-Key` keep the visit id; a visit id
 * that no header can carry (non-ASCII) is refused at intake (docs/webhooks.md, "Message ids").
 * The receiver verifies each delivery with the `standardwebhooks` package.
 */
describe('webhook-id of a visit id with `.`, and visit ids with non-ASCII characters', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let tenant: StoredTenant

  beforeAll(async () => {
    deps = await createTestDeps()
    receiver = await startReceiver()
    tenant = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: receiver.url } })
  })
  afterAll(async () => {
    await tenant?.cleanup()
    await receiver?.close()
    await deps?.cleanup()
  })

  async function deliver(eventId: string) {
    const body = JSON.stringify({ id: eventId, event: 'visitor.identified' })
    const delivery = await createDelivery(deps, {
      accountId: tenant.account.id,
      integrationId: tenant.integrationId,
      eventId,
      body,
      now: new Date().toISOString(),
    })
    await drainDueTasks(deps)
    const request = receiver.requests.find((r) => JSON.parse(r.body).id === eventId)
    expect(request, eventId).toBeDefined()
    return Object.assign(request!, { delivery })
  }

  /** the delivery again (an operator's replay): the attempt a receiver sees as a retry */
  async function replay(delivery: DeliveryRecord) {
    receiver.requests.length = 0
    await replayDelivery(deps, (await deps.deliveries.get(delivery.id))!)
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
    return receiver.requests[0]!
  }

  const suffix = () => Math.random().toString(36).slice(2)

  it.each([
    ['dots', () => `visit.${suffix()}.a.b`],
    ['a dot and inner spaces', () => `v. ${suffix()} .x`],
    ['an id stored before visit ids were checked (Latin-1)', () => `visite.${suffix()}-café`],
  ])('%s: a message id without `.` in printable ASCII, stable per event, verified by standardwebhooks', async (_name, make) => {
    const eventId = make()
    const first = await deliver(eventId)
    const webhookId = String(first.headers['webhook-id'])
    expect(webhookId).toMatch(/^msg_sha256_[A-Za-z0-9_-]{43}$/)
    const verified = new Webhook(tenant.signingSecret!).verify(first.body, first.headers as Record<string, string>) as { id: string }
    expect(verified.id).toBe(eventId)
    // the same event id gives the same message id (a receiver's dedupe holds across retries and replays)
    const again = await replay(first.delivery)
    expect(again.headers['webhook-id']).toBe(webhookId)
    expect(() => new Webhook(tenant.signingSecret!).verify(again.body, again.headers as Record<string, string>)).not.toThrow()
  })

  it('a visit id a header cannot carry is refused at intake (contract 6: it is the X-Service-Idempotency-Key)', () => {
    const event = { account_id: 'acct', tier: 'person', contact_id: 'c' }
    for (const id of [`visite-café`, 'visit-東京-🚀', ' leading', 'trailing ', 'tab\tinside', 'new\nline']) {
      expect(() => validateVisitEvent({ ...event, id }), id).toThrow(InvalidVisitEvent)
    }
    for (const id of ['visit.1.a', 'v. x .y', '~!@#$%^&*()', 'a']) expect(validateVisitEvent({ ...event, id }).id).toBe(id)
  })

  it('X-Service-Signature is what the published OpenAPI description says: HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<body>`', async () => {
    const doc = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'))
    const parameters = doc.webhooks.visitorIdentifiedV2.post.parameters as Array<{ name: string; description: string }>
    const described = parameters.find((p) => p.name === 'X-Service-Signature')!.description
    expect(described).toContain('HMAC-SHA256')
    expect(described).toContain('`<webhook-id>.<webhook-timestamp>.<exact body bytes>`')
    const request = await deliver(`visit.${suffix()}`)
    const key = Buffer.from(tenant.signingSecret!.slice('whsec_'.length), 'base64')
    const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`
    expect(request.headers['x-service-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`)
  })

  it('an id that is already safe is sent as it is, and so is the idempotency key', async () => {
    const eventId = `evt_${suffix()}-A:1`
    const request = await deliver(eventId)
    expect(request.headers['webhook-id']).toBe(eventId)
    expect(request.headers['x-service-idempotency-key']).toBe(eventId)
    expect(() => new Webhook(tenant.signingSecret!).verify(request.body, request.headers as Record<string, string>)).not.toThrow()
  })

  it('an id that looks like a derived one is derived too, so two events never share a message id', async () => {
    const dotted = `visit.${suffix()}`
    const derived = String((await deliver(dotted)).headers['webhook-id'])
    const lookalike = await deliver(derived)
    expect(lookalike.headers['webhook-id']).not.toBe(derived)
    expect(String(lookalike.headers['webhook-id'])).toMatch(/^msg_sha256_/)
  })
})
