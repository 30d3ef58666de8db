import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createDeliveryTaskHandler } from '@lsv/shared/domain/webhooks/deliver.ts'
import { readEndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { LATENCY_BOUNDS_MS, latencyHistogramListener, readLatencyHistogram } from '@lsv/shared/domain/webhooks/listeners/latency-histogram.ts'
import { healthCountersListener } from '@lsv/shared/domain/webhooks/listeners/health-counters.ts'
import { EXPIRY_GRAIN_MS } from '@lsv/shared/domain/outcomes/counter-buffer.ts'
import type { Counters } from '@lsv/shared/ports/counters.ts'
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
    const told = (latency_ms: number, status_code: number | null = 200): DeliveryAttempted => ({
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
      attempt: {
        attempt: 1,
        at: new Date().toISOString(),
        status_code,
        error: status_code !== null ? null : latency_ms > 0 ? 'ECONNRESET' : 'no signing secret',
        latency_ms,
        response_excerpt: null,
      },
      target: null,
      maxAttempts: 8,
    })
    for (const ms of [300, 300, 20_000]) listener.onDeliveryAttempted(told(ms), deps)
    // an answer within the millisecond (a near receiver) measures 0 and counts; no answer in no time sent nothing
    listener.onDeliveryAttempted(told(0), deps)
    listener.onDeliveryAttempted(told(0, null), deps)
    listener.onDeliveryAttempted(told(40, null), deps)
    await listener.flush()
    // 0 and 40 ms in the first bucket (up to 100); 300 ms in (250, 500]; 20 s past the last bound
    expect(await readLatencyHistogram(deps, 'int_latency_unit')).toEqual([2, 0, 2, 0, 0, 0, 0, 1])
  })

  it('the health listener writes its counters once a flush, not once an attempt, and keeps the latest instants', async () => {
    // every store write the listener makes, with the expiry it asked for
    const writes: Array<{ keys: number; expireAtMs: number }> = []
    const counting: Counters = {
      ...deps.counters,
      apply: (changes, expireAtMs) => {
        writes.push({ keys: changes.length, expireAtMs })
        return deps.counters.apply(changes, expireAtMs)
      },
    }
    const listener = healthCountersListener({ counters: counting, logger: deps.logger })
    const integrationId = `int_health_unit_${Math.random().toString(36).slice(2)}`
    // 60 attempts, each at its own millisecond, inside one minute (as a busy endpoint's come);
    // every fifth one failed
    const minute = Date.now() - (Date.now() % EXPIRY_GRAIN_MS)
    const at = (i: number) => minute + 1_000 + i * 7
    const told = (i: number): DeliveryAttempted => ({
      outcome: i % 5 === 0 ? 'retrying' : 'succeeded',
      delivery: {
        id: `dlv_h${i}`,
        account_id: 'acc',
        integration_id: integrationId,
        event_id: `e${i}`,
        status: i % 5 === 0 ? 'retrying' : 'succeeded',
        attempts: [],
        body: '{}',
        next_attempt_at: null,
        created_at: '',
        updated_at: '',
      },
      attempt: { attempt: 1, at: new Date(at(i)).toISOString(), status_code: i % 5 === 0 ? 500 : 200, error: null, latency_ms: 5, response_excerpt: null },
      target: null,
      maxAttempts: 8,
    })
    for (let i = 0; i < 60; i++) listener.onDeliveryAttempted(told(i), deps)
    await listener.flush()
    // mutation: expiries not rounded (counter-buffer.ts) -> 61 writes, one per attempt's latest instant
    expect(writes.length).toBeLessThanOrEqual(2)
    expect(writes.reduce((n, w) => n + w.keys, 0)).toBe(4) // the hour's two counts, the two latest instants
    const health = await readEndpointHealth(deps, integrationId)
    expect([health.succeeded, health.failed]).toEqual([48, 12])
    expect([health.lastSuccess, health.lastFailure]).toEqual([new Date(at(59)).toISOString(), new Date(at(55)).toISOString()])
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
