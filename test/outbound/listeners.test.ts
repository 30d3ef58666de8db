import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { readEndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { LATENCY_BOUNDS_MS, latencyHistogramListener, readLatencyHistogram } from '@lsv/shared/domain/webhooks/listeners/latency-histogram.ts'
import type { DeliveryAttempted, DeliveryListener } from '@lsv/shared/ports/listeners.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { startReceiver, type Answer } from './harness.ts'

/**
 * The delivery job's outcome and its listeners (ports/listeners.ts, platform/listeners.ts): the
 * task handler tells every listener of the composition root what each attempt ended as; a
 * listener that throws fails neither the attempt nor the listeners after it; the health and
 * latency listeners keep their counters from what they are told.
 */
describe('delivery outcomes and their listeners', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let answer: () => Answer = () => ({ status: 200 })
  const tenants: StoredTenant[] = []

  beforeAll(async () => {
    deps = await createTestDeps()
    receiver = await startReceiver(() => answer())
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await receiver.close()
    await deps.cleanup()
  })

  /** a new endpoint and one delivery to it, run once through the task handler of `withDeps` */
  async function deliverOnce(withDeps: PlatformDeps = deps) {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: receiver.url } })
    tenants.push(t)
    const eventId = `evt_${Math.random().toString(36).slice(2)}`
    const delivery = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integration.id,
      eventId,
      body: '{}',
      now: new Date().toISOString(),
    })
    const outcome = await createDeliveryTaskHandler(withDeps, () => 0.5)(Buffer.from(JSON.stringify({ v: 1, delivery_id: delivery.id, seq: 1, attempt: 1 })))
    await deps.listeners.flush()
    return { integrationId: t.integration.id, outcome }
  }

  it('endpoint health comes from what the listener was told: a 200 and a 500', async () => {
    const ok = await deliverOnce()
    expect(ok.outcome).toBe('succeeded')
    answer = () => ({ status: 500 })
    const bad = await deliverOnce()
    answer = () => ({ status: 200 })
    expect(bad.outcome).toBe('retrying')
    // mutation: the health listener's line removed from platform/listeners.ts -> 0 and "never"
    const healthOk = await readEndpointHealth(deps, ok.integrationId)
    expect([healthOk.succeeded, healthOk.failed, healthOk.hourly.filter((h) => h.ok > 0).length]).toEqual([1, 0, 1])
    expect(healthOk.lastSuccess).not.toBeNull()
    const healthBad = await readEndpointHealth(deps, bad.integrationId)
    expect([healthBad.succeeded, healthBad.failed, healthBad.lastSuccess]).toEqual([0, 1, null])
  })

  it('the latency histogram listener (one file, one line at the root) counts each attempt that reached the receiver', async () => {
    const { integrationId } = await deliverOnce()
    // mutation: the listener's line removed from platform/listeners.ts -> all zero
    const histogram = await readLatencyHistogram(deps, integrationId)
    expect(histogram).toHaveLength(LATENCY_BOUNDS_MS.length + 1)
    expect(histogram.reduce((a, b) => a + b, 0)).toBe(1)
  })

  it('puts an attempt in the bucket of its latency, and ignores attempts that sent nothing', async () => {
    const listener = latencyHistogramListener(deps)
    const told = (latency_ms: number): DeliveryAttempted => ({
      outcome: 'succeeded',
      delivery: {
        id: 'dlv_x',
        account_id: 'acc',
        integration_id: 'int_latency_unit',
        event_id: 'e',
        status: 'succeeded',
        attempts: [],
        body: '{}',
        next_attempt_at: null,
        created_at: '',
        updated_at: '',
      },
      attempt: { attempt: 1, at: new Date().toISOString(), status_code: 200, error: null, latency_ms, response_excerpt: null },
      target: null,
      maxAttempts: 8,
    })
    for (const ms of [300, 300, 20_000, 0]) listener.onDeliveryAttempted(told(ms), deps)
    await listener.flush()
    // 300 ms is in the (250, 500] bucket; 20 s past the last bound; 0 (nothing sent) nowhere
    expect(await readLatencyHistogram(deps, 'int_latency_unit')).toEqual([0, 0, 2, 0, 0, 0, 0, 1])
  })

  it('a listener that throws fails neither the attempt nor the listeners after it', async () => {
    const seen: string[] = []
    const throwing: DeliveryListener = {
      name: 'throws',
      onDeliveryAttempted() {
        throw new Error('listener bug')
      },
    }
    const recording: DeliveryListener = { name: 'records', onDeliveryAttempted: (o) => void seen.push(o.outcome) }
    const { outcome } = await deliverOnce({ ...deps, listeners: { ...deps.listeners, delivery: [throwing, recording] } })
    expect(outcome).toBe('succeeded')
    expect(seen).toEqual(['succeeded'])
  })
})
