import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { buildApp } from '../../services/portal-api/src/app.ts'
import { ADMIN, fails, ok } from '../management/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'

/**
 * Signing secret rotation with a grace period (`POST …/integrations/{id}/secret/rotate`) and the
 * test event (`POST …/integrations/{id}/test-event`), through the real delivery path: a receiver
 * on 127.0.0.1 that holds only the OLD secret verifies with the `standardwebhooks` package during
 * the grace, and fails after it.
 */
describe('integration signing secret rotation and test events', () => {
  // the standardwebhooks package checks the timestamp against the real clock (5 min tolerance)
  const clock = new ManualClock(Date.now())
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let app: Awaited<ReturnType<typeof buildApp>>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  const tenants: ManagedTenant[] = []
  let accountId: string
  let integrationId: string
  let oldSecret: string

  const verifies = (secret: string, r: { body: string; headers: Record<string, unknown> }) => {
    try {
      new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
      return true
    } catch {
      return false
    }
  }
  const sendTest = async () => {
    const sent = await ok(app, 202, 'POST', `${ADMIN}/${accountId}/integrations/${integrationId}/test-event`)
    const before = receiver.requests.length
    await drainDueTasks(deps)
    expect(receiver.requests.length).toBe(before + 1)
    return { sent, request: receiver.requests.at(-1)! }
  }

  beforeAll(async () => {
    deps = await createTestDeps({ clock })
    app = await buildApp(deps)
    receiver = await startReceiver()
    const tenant = await createTestTenant({ managementApi: app, deps }, { ...ACCOUNT_ONLY, integration: { url: receiver.url, payloadVersion: 2 } })
    tenants.push(tenant)
    accountId = tenant.accountId
    integrationId = tenant.integrationId
    oldSecret = tenant.signingSecret
  })
  afterAll(async () => {
    await receiver?.close()
    await app?.close()
    for (const t of tenants) await t.cleanup()
    await deps?.cleanup()
  })

  it('a test event is a contract-shaped visitor.identified, marked as a test, signed like any delivery', async () => {
    const { sent, request } = await sendTest()
    expect(sent.event_id).toMatch(/^evt_test_/)
    const body = JSON.parse(request.body)
    expect(body).toMatchObject({ event: 'visitor.identified', id: sent.event_id, classification: 'test', tier: 'person' })
    expect(request.headers['webhook-id']).toBe(sent.event_id)
    expect(verifies(oldSecret, request)).toBe(true)
    // it is in the delivery log like any other delivery
    const log = await ok(app, 200, 'GET', `${ADMIN}/${accountId}/integrations/${integrationId}/deliveries?status=succeeded`)
    expect(log.data.map((d: { id: string }) => d.id)).toContain(sent.delivery_id)
    const none = await ok(app, 200, 'GET', `${ADMIN}/${accountId}/integrations/${integrationId}/deliveries?status=failed`)
    expect(none.data).toEqual([])
  })

  it('during the grace both secrets sign; a receiver with only the old secret still verifies, and fails after', async () => {
    const rotated = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/integrations/${integrationId}/secret/rotate`, { grace_seconds: 60 })
    expect(rotated.signing_secret).toMatch(/^whsec_/)
    expect(rotated.signing_secret).not.toBe(oldSecret)
    expect(Date.parse(rotated.previous_expires_at)).toBe(clock.now() + 60_000)

    const during = (await sendTest()).request
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2)
    expect(verifies(oldSecret, during)).toBe(true)
    expect(verifies(rotated.signing_secret, during)).toBe(true)

    clock.advance(60_001)
    const after = (await sendTest()).request
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(verifies(oldSecret, after)).toBe(false)
    expect(verifies(rotated.signing_secret, after)).toBe(true)
  })

  it('grace 0 ends the old secret at once; another account or an unknown id is 404; a bad grace is 400', async () => {
    const before = await ok(app, 201, 'POST', `${ADMIN}/${accountId}/integrations/${integrationId}/secret/rotate`, { grace_seconds: 0 })
    expect(before.previous_expires_at).toBeNull()
    const { request } = await sendTest()
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(verifies(before.signing_secret, request)).toBe(true)

    const otherTenant = await createTestTenant({ managementApi: app, deps }, ACCOUNT_ONLY)
    tenants.push(otherTenant)
    const other = otherTenant.accountId
    expect((await fails(app, 'POST', `${ADMIN}/${other}/integrations/${integrationId}/secret/rotate`, {})).status).toBe(404)
    expect((await fails(app, 'POST', `${ADMIN}/${other}/integrations/${integrationId}/test-event`)).status).toBe(404)
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/integrations/int_nope/secret/rotate`, {})).status).toBe(404)
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/integrations/${integrationId}/secret/rotate`, { grace_seconds: -1 })).status).toBe(400)
  })

  it('a disabled integration takes no test event (409)', async () => {
    await ok(app, 200, 'PATCH', `${ADMIN}/${accountId}/integrations/${integrationId}`, { active: false })
    expect((await fails(app, 'POST', `${ADMIN}/${accountId}/integrations/${integrationId}/test-event`)).status).toBe(409)
    await ok(app, 200, 'PATCH', `${ADMIN}/${accountId}/integrations/${integrationId}`, { active: true })
  })
})
