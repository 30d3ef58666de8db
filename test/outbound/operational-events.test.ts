import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createDelivery, queueNameFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { isPoolQueue } from '@lsv/shared/domain/webhooks/queue-pool.ts'
import { QueueUnavailableError } from '@lsv/shared/errors/queue-errors.ts'
import type { TaskScheduler } from '@lsv/shared/ports/task-scheduler.ts'
import { generateSigningSecret } from '@lsv/shared/domain/webhooks/signing.ts'
import { emitOperationalEvent } from '@lsv/shared/domain/operations/emit.ts'
import { FAILURE_THRESHOLD, noteEndpointOutcome } from '@lsv/shared/domain/operations/endpoint-failing.ts'
import { OperationalEvent } from '@lsv/shared/contract/operational-event.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { drainDueTasks, startReceiver, type Answer, type ReceivedRequest } from './harness.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>
const checkEvent = messageCheck(OperationalEvent)

/**
 * Operational events (issue 23, issue 22 job 5) as the operator's receiver meets them: real
 * Standard-Webhooks-signed POSTs on a local HTTP server, sent by the webhook delivery machinery
 * (the embedded task scheduler and the dispatcher's task handler), verified with the
 * `standardwebhooks` package and the configured secret, their bodies valid against the one schema.
 */
describe('operational events: signed POSTs to OPERATOR_EVENTS_URL', () => {
  let deps: Deps
  let clock: ManualClock
  let operator: Awaited<ReturnType<typeof startReceiver>>
  let endpoint: Awaited<ReturnType<typeof startReceiver>>
  let answer: () => Answer = () => ({ status: 500 })
  const secret = generateSigningSecret()
  const tenants: StoredTenant[] = []

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    operator = await startReceiver(() => ({ status: 200 }))
    endpoint = await startReceiver(() => answer())
    deps = await createTestDeps({ clock, env: { OPERATOR_EVENTS_URL: operator.url, OPERATOR_EVENTS_SECRET: secret } })
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await operator?.close()
    await endpoint?.close()
    await deps?.cleanup()
  })

  const verified = (r: ReceivedRequest): OperationalEvent => {
    // the signature over the exact bytes received, with the operator's secret (mutation: sign with another secret, or not at all -> throws)
    const payload = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as unknown
    const checked = checkEvent(payload)
    if (!checked.ok) throw new Error(checked.reason)
    expect(r.headers['webhook-id']).toBe(checked.value.id)
    return checked.value
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

  it('a failing endpoint: endpoint.failing at 50 % and 70 % of the threshold, once each, signed; the mark clears on success', async () => {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: endpoint.url } })
    tenants.push(t)
    answer = () => ({ status: 500 })
    await deliveries(t, FAILURE_THRESHOLD / 2 - 1)
    // mutation: a step reached one delivery early (ceil -> floor, or 40 %) -> an event here
    expect(operator.requests).toHaveLength(0)
    await deliveries(t, 1)
    expect(operator.requests).toHaveLength(1)
    const first = verified(operator.requests[0]!)
    expect(first).toMatchObject({
      type: 'endpoint.failing',
      data: {
        account_id: t.account.id,
        integration_id: t.integration.id,
        percent: 50,
        consecutive_failures: FAILURE_THRESHOLD / 2,
        threshold: FAILURE_THRESHOLD,
        last_error: 'HTTP 500',
      },
    })
    // never the URL (its path or query may hold the receiver's token): the host only
    expect(operator.requests[0]!.body).not.toContain('/hooks/lsv')
    expect((await deps.tenants.getIntegration(t.integration.id))!.failing).toEqual({
      since: first.type === 'endpoint.failing' ? first.data.since : '',
      percent: 50,
    })

    await deliveries(t, 3)
    // mutation: an event per failed attempt instead of per step -> 4 here
    expect(operator.requests).toHaveLength(1)
    await deliveries(t, 1)
    expect(operator.requests).toHaveLength(2)
    expect(verified(operator.requests[1]!)).toMatchObject({ type: 'endpoint.failing', data: { percent: 70, consecutive_failures: 14 } })

    // the same observation again (a retried task, another instance): the same id, no second POST
    const integration = (await deps.tenants.updateIntegration(t.integration.id, { failing: { since: '2000-01-01T00:00:00.000Z', percent: 50 } }))!
    await noteEndpointOutcome(deps, integration, { kind: 'failed', error: 'HTTP 500' })
    await drainDueTasks(deps)
    expect(operator.requests).toHaveLength(2)

    // a success ends the streak: the portal's banner mark is cleared
    answer = () => ({ status: 200 })
    await deliveries(t, 1)
    expect((await deps.tenants.getIntegration(t.integration.id))!.failing).toBeNull()
  })

  it('an endpoint answering 410 is disabled: endpoint.disabled, signed', async () => {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: endpoint.url } })
    tenants.push(t)
    operator.requests.length = 0
    answer = () => ({ status: 410 })
    await deliveries(t, 1)
    expect(operator.requests).toHaveLength(1)
    expect(verified(operator.requests[0]!)).toMatchObject({
      type: 'endpoint.disabled',
      data: { integration_id: t.integration.id, reason: 'endpoint answered 410', host: new URL(endpoint.url).host },
    })
  })

  it('emitOperationalEvent (what the queue pool calls): retried by the delivery schedule until the operator answers 200', async () => {
    operator.requests.length = 0
    let n = 0
    const flaky = await startReceiver(() => ({ status: ++n === 1 ? 503 : 200 }))
    const flakyDeps = await createTestDeps({ clock, env: { OPERATOR_EVENTS_URL: flaky.url, OPERATOR_EVENTS_SECRET: secret } })
    try {
      const sent = await emitOperationalEvent(flakyDeps, {
        type: 'queue.created_late',
        occurred_at: new Date(clock.now()).toISOString(),
        data: { queue: 'webhook-int-x-0123456789ab', integration_id: 'int_x', pool_queue: 'webhook-pool-00' },
      })
      expect(sent?.id).toMatch(/^opev_/)
      await drainDueTasks(flakyDeps)
      expect(flaky.requests).toHaveLength(1)
      clock.advance(10_000) // past the second attempt's delay (5 s ± 20 %)
      await drainDueTasks(flakyDeps)
      // mutation: operator deliveries not retried (a second sender without the schedule) -> 1
      expect(flaky.requests).toHaveLength(2)
      expect(verified(flaky.requests[1]!).id).toBe(sent!.id)
    } finally {
      await flaky.close()
      await flakyDeps.cleanup()
    }
  })

  it("an endpoint's new queue does not take tasks yet: queue.created_late, signed, once (the same queue again: no second POST)", async () => {
    const t = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: endpoint.url } })
    tenants.push(t)
    operator.requests.length = 0
    answer = () => ({ status: 200 })
    const own = queueNameFor(t.integration.id)
    // Cloud Tasks' answer for a queue created moments ago, on this endpoint's own queue only
    const late: TaskScheduler = {
      ...deps.tasks,
      enqueue: (task) => (task.queue === own ? Promise.reject(new QueueUnavailableError(task.queue)) : deps.tasks.enqueue(task)),
    }
    const send = () =>
      createDelivery(
        { ...deps, tasks: late },
        {
          accountId: t.account.id,
          integrationId: t.integration.id,
          eventId: `evt_${Math.random().toString(36).slice(2)}`,
          body: '{}',
          now: new Date(clock.now()).toISOString(),
        },
      )
    await send()
    await drainDueTasks(deps)
    // mutation: the emit in enqueueOnDeliveryQueue removed (only the log line, as before) -> 0 POSTs
    expect(operator.requests).toHaveLength(1)
    const event = verified(operator.requests[0]!)
    expect(event).toMatchObject({ type: 'queue.created_late', data: { queue: own, integration_id: t.integration.id } })
    expect(event.type === 'queue.created_late' && isPoolQueue(event.data.pool_queue)).toBe(true)
    // the tenant's delivery went out through the pool queue meanwhile
    expect(endpoint.requests.length).toBeGreaterThan(0)

    // the same process meets the queue late again: reported once per queue and process
    await send()
    // another instance (its own scheduler, nothing remembered) meets it late too: the same id,
    // so the same delivery and no second POST (mutation: key on occurred_at or a random id -> 2)
    const other: TaskScheduler = { ...late, enqueue: (task) => late.enqueue(task) }
    await createDelivery(
      { ...deps, tasks: other },
      { accountId: t.account.id, integrationId: t.integration.id, eventId: 'evt_other_instance', body: '{}', now: new Date(clock.now()).toISOString() },
    )
    await drainDueTasks(deps)
    expect(operator.requests).toHaveLength(1)
  })
})
