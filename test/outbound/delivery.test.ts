import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createDelivery, replayDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { GONE_REASON } from '@lsv/shared/domain/webhooks/schedule.ts'
import { RETRY_ANCHORS_MS } from '@lsv/shared/domain/webhooks/schedule.ts'
import { listDeliveryLog, replayDeliveryFor } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { drainDueTasks, startReceiver, type Answer } from './harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>

describe('webhook delivery: attempts, retries, 410, redirects, replay', () => {
  let deps: Deps
  let clock: ManualClock
  const tenants: StoredTenant[] = []
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let script: (n: number) => Answer = () => ({ status: 200 })

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    deps = await createTestDeps({ clock })
    receiver = await startReceiver((_r, n) => script(n))
  })
  afterEach(() => {
    receiver.requests.length = 0
    script = () => ({ status: 200 })
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await receiver.close()
    await deps.cleanup()
  })

  async function newDelivery(url = receiver.url) {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url } })
    tenants.push(t)
    const eventId = `evt_${Math.random().toString(36).slice(2)}`
    const body = JSON.stringify({ id: eventId, event: 'visitor.identified' })
    const delivery = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integration.id,
      eventId,
      body,
      now: new Date(clock.now()).toISOString(),
    })
    return { ...t, delivery, eventId, body }
  }

  it('POSTs the exact body bytes as JSON with the idempotency key; only 200 acknowledges', async () => {
    const { delivery, eventId, body } = await newDelivery()
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
    const [r] = receiver.requests
    expect(r!.method).toBe('POST')
    expect(r!.body).toBe(body)
    expect(r!.headers['content-type']).toBe('application/json')
    expect(r!.headers['x-service-idempotency-key']).toBe(eventId)
    expect(r!.headers['webhook-id']).toBe(eventId)
    expect(r!.headers['x-service-signature']).toMatch(/^v1,/)
    const stored = await deps.deliveries.get(delivery.id)
    expect(stored!.status).toBe('succeeded')
    expect(stored!.attempts).toHaveLength(1)
    expect(stored!.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null })
  })

  it('a 201 or 204 is not an acknowledgement: retried on the schedule, then failed and kept', async () => {
    script = (n) => ({ status: n % 2 ? 201 : 204, body: 'x'.repeat(3000) })
    const { delivery } = await newDelivery()
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
    let stored = await deps.deliveries.get(delivery.id)
    expect(stored!.status).toBe('retrying')
    expect(stored!.attempts[0]!.response_excerpt!.length).toBe(1024)
    // walk the schedule: nothing runs before the (jittered, here centred) anchor, then one attempt runs
    for (let attempt = 2; attempt <= RETRY_ANCHORS_MS.length; attempt++) {
      const anchor = RETRY_ANCHORS_MS[attempt - 1]!
      clock.advance(anchor - 1000)
      await drainDueTasks(deps)
      expect(receiver.requests).toHaveLength(attempt - 1)
      clock.advance(1000)
      await drainDueTasks(deps)
      expect(receiver.requests).toHaveLength(attempt)
    }
    stored = await deps.deliveries.get(delivery.id)
    expect(stored!.status).toBe('failed')
    expect(stored!.attempts).toHaveLength(8)
    expect(stored!.next_attempt_at).toBeNull()
    clock.advance(48 * 3_600_000)
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(8)
  })

  it('honours Retry-After when it is later than the schedule', async () => {
    script = (n) => (n === 1 ? { status: 503, headers: { 'retry-after': '120' } } : { status: 200 })
    const { delivery } = await newDelivery()
    await drainDueTasks(deps)
    clock.advance(60_000) // past the 5 s step, before Retry-After
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
    clock.advance(60_000)
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(2)
    expect((await deps.deliveries.get(delivery.id))!.status).toBe('succeeded')
  })

  it('410 disables the integration with a reason and stops retrying', async () => {
    script = () => ({ status: 410 })
    const { delivery, integration } = await newDelivery()
    await drainDueTasks(deps)
    const stored = await deps.deliveries.get(delivery.id)
    expect(stored!.status).toBe('failed')
    const after = await deps.tenants.getIntegration(integration.id)
    expect(after!.active).toBe(false)
    expect(after!.disabled_reason).toBe(GONE_REASON)
    clock.advance(24 * 3_600_000)
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
  })

  it('does not follow redirects: a 302 is an unacknowledged attempt', async () => {
    const target = await startReceiver(() => ({ status: 200 }))
    try {
      script = () => ({ status: 302, headers: { location: target.url } })
      const { delivery } = await newDelivery()
      await drainDueTasks(deps)
      expect(target.requests).toHaveLength(0)
      const stored = await deps.deliveries.get(delivery.id)
      expect(stored!.status).toBe('retrying')
      expect(stored!.attempts[0]!.status_code).toBe(302)
    } finally {
      await target.close()
    }
  })

  it('reads at most 64 KiB of a large answer and keeps a 1 KiB excerpt', async () => {
    script = () => ({ status: 500, body: 'y'.repeat(512 * 1024) })
    const { delivery } = await newDelivery()
    await drainDueTasks(deps)
    const stored = await deps.deliveries.get(delivery.id)
    expect(stored!.attempts[0]!.status_code).toBe(500)
    expect(stored!.attempts[0]!.response_excerpt).toBe('y'.repeat(1024))
  })

  it('refuses a private destination at send time, without connecting', async () => {
    const { delivery } = await newDelivery('http://10.255.255.1:9/hook')
    await drainDueTasks(deps)
    const stored = await deps.deliveries.get(delivery.id)
    expect(stored!.attempts[0]!.status_code).toBeNull()
    expect(stored!.attempts[0]!.error).toMatch(/not allowed/)
  })

  it('replay sends a failed delivery again and records a new run of attempts', async () => {
    script = () => ({ status: 410 })
    const { delivery, integration } = await newDelivery()
    await drainDueTasks(deps)
    await deps.tenants.updateIntegration(integration.id, { active: true, disabled_reason: null })
    script = () => ({ status: 200 })
    const failed = await deps.deliveries.get(delivery.id)
    await replayDelivery(deps, failed!)
    await drainDueTasks(deps)
    const stored = await deps.deliveries.get(delivery.id)
    expect(stored!.status).toBe('succeeded')
    expect(stored!.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 410],
      [1, 200],
    ])
    expect(receiver.requests.map((r) => r.body)).toEqual([delivery.body, delivery.body])
  })

  it('creating the same delivery twice keeps one record and sends once', async () => {
    const { delivery, account, integration, eventId, body } = await newDelivery()
    await createDelivery(deps, { accountId: account.id, integrationId: integration.id, eventId, body, now: new Date(clock.now()).toISOString() })
    await drainDueTasks(deps)
    expect(receiver.requests).toHaveLength(1)
    expect((await deps.deliveries.get(delivery.id))!.attempts).toHaveLength(1)
  })

  it('the delivery log lists newest first with a cursor; replay checks ownership and the integration state', async () => {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: receiver.url } })
    tenants.push(t)
    const made: string[] = []
    for (let i = 0; i < 3; i++) {
      clock.advance(1000)
      const d = await createDelivery(deps, {
        accountId: t.account.id,
        integrationId: t.integration.id,
        eventId: `evt_log_${i}_${t.account.id}`,
        body: '{}',
        now: new Date(clock.now()).toISOString(),
      })
      made.push(d.id)
    }
    const p1 = await listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: undefined, limit: 2 })
    expect(p1.data.map((d) => d.id)).toEqual([made[2], made[1]])
    expect(p1.has_more).toBe(true)
    expect(p1.data[0]).not.toHaveProperty('body')
    const p2 = await listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: p1.next_cursor!, limit: 2 })
    expect(p2.data.map((d) => d.id)).toEqual([made[0]])
    expect(p2.has_more).toBe(false)
    await expect(listDeliveryLog(deps, 'another-account', t.integration.id, { cursor: undefined, limit: 2 })).rejects.toMatchObject({ code: 'not_found' })
    await expect(listDeliveryLog(deps, t.account.id, t.integration.id, { cursor: 'garbage!', limit: 2 })).rejects.toMatchObject({ code: 'invalid_cursor' })
    await expect(replayDeliveryFor(deps, 'another-account', t.integration.id, made[0]!)).rejects.toMatchObject({ code: 'not_found' })
    await expect(replayDeliveryFor(deps, t.account.id, t.integration.id, 'dlv_nope')).rejects.toMatchObject({ code: 'not_found' })
    await deps.tenants.updateIntegration(t.integration.id, { active: false, disabled_reason: GONE_REASON })
    await expect(replayDeliveryFor(deps, t.account.id, t.integration.id, made[0]!)).rejects.toMatchObject({ code: 'conflict' })
    await deps.tenants.updateIntegration(t.integration.id, { active: true, disabled_reason: null })
    await expect(replayDeliveryFor(deps, t.account.id, t.integration.id, made[0]!)).resolves.toMatchObject({ id: made[0], status: 'pending' })
  })
})
