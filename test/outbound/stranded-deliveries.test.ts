/**
 * A delivery whose task is gone gets it back (domain/webhooks/sweep.ts, deliveries.ts
 * resumeDelivery, visits/handle.ts), on the embedded adapters and the dispatcher's own handler.
 * "Gone" is played by a scheduler in front of the embedded one that drops enqueues while `lose`
 * is on: what Cloud Tasks does once a queue gives up on a task, or an enqueue that never happened.
 * Each case names the mutation that makes it fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import type { TaskRequest, TaskScheduler } from '@lsv/shared/ports/task-scheduler.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { createDelivery, deliveryIdFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { createDeliverySweeper, SWEEP_DEFAULTS, sweepStrandedDeliveries } from '@lsv/shared/domain/webhooks/sweep.ts'
import { handleVisitEvent } from '@lsv/shared/domain/visits/handle.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { drainDueTasks, startReceiver, type Answer } from './harness.ts'

type Deps = Awaited<ReturnType<typeof createTestDeps>>

describe('stranded deliveries: the sweep and a redelivered visit event enqueue the missing task again', () => {
  let base: Deps
  let deps: PlatformDeps
  let clock: ManualClock
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let script: (n: number) => Answer = () => ({ status: 200 })
  const tenants: StoredTenant[] = []
  let lose = false
  const enqueued: TaskRequest[] = []

  beforeAll(async () => {
    clock = new ManualClock(Date.now())
    base = await createTestDeps({ clock })
    const real = base.tasks
    // the embedded scheduler (runDue and all), except that enqueues vanish while `lose` is on
    const lossy = Object.create(real) as TaskScheduler
    lossy.enqueue = async (task) => {
      enqueued.push(task)
      if (!lose) await real.enqueue(task)
    }
    deps = { ...base, tasks: lossy }
    receiver = await startReceiver((_r, n) => script(n))
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await receiver.close()
    await base.cleanup()
  })

  async function tenant() {
    const t = await createTestTenant(base, { ...ACCOUNT_ONLY, integration: { url: receiver.url } })
    tenants.push(t)
    return t
  }
  const requestsFor = (eventId: string) => receiver.requests.filter((r) => r.headers['webhook-id'] === eventId)
  const minutes = (n: number) => n * 60_000

  /** a delivery of a new event to a new tenant's endpoint, created now (its first task enqueued) */
  async function newDelivery() {
    const t = await tenant()
    const eventId = `evt_${randomSuffix()}`
    const delivery = await createDelivery(deps, {
      accountId: t.account.id,
      integrationId: t.integration.id,
      eventId,
      body: JSON.stringify({ id: eventId }),
      now: new Date(clock.now()).toISOString(),
    })
    return { delivery, eventId }
  }

  /** a new delivery whose first task never reached the scheduler */
  async function lostDelivery() {
    lose = true
    try {
      return await newDelivery()
    } finally {
      lose = false
    }
  }

  it('a pending delivery whose task is gone is found once its grace passed, enqueued again and delivered; then it is no longer listed', async () => {
    const { delivery, eventId } = await lostDelivery()
    await drainDueTasks(deps)
    expect(requestsFor(eventId)).toHaveLength(0)

    // mutation: the sweep ignores graceMs (lists everything due now) -> checked 1 here
    clock.advance(SWEEP_DEFAULTS.graceMs - 1000)
    const early = await deps.deliveries.listDue(new Date(clock.now() - SWEEP_DEFAULTS.graceMs).toISOString(), 1000)
    expect(early.map((d) => d.id)).not.toContain(delivery.id)

    clock.advance(2000)
    const result = await sweepStrandedDeliveries(deps)
    // mutation: listDue misses pending deliveries (or the sweep skips them) -> never delivered
    expect(result.resumed).toBeGreaterThanOrEqual(1)
    await drainDueTasks(deps)
    expect(requestsFor(eventId)).toHaveLength(1)
    expect((await deps.deliveries.get(delivery.id))!.status).toBe('succeeded')
    // mutation: listDue lists done deliveries too -> the succeeded one would come back
    const after = await deps.deliveries.listDue(new Date(clock.now()).toISOString(), 1000)
    expect(after.map((d) => d.id)).not.toContain(delivery.id)
  })

  it('is idempotent with a live task: sweeping twice enqueues the one name the task already has, and the receiver gets one request', async () => {
    const { delivery, eventId } = await newDelivery()
    clock.advance(minutes(11))
    await sweepStrandedDeliveries(deps)
    await sweepStrandedDeliveries(deps)
    const names = new Set(enqueued.filter((e) => e.name.startsWith(delivery.id)).map((e) => e.name))
    // mutation: resumeDelivery enqueues under a fresh name (a suffix per sweep) -> three names, and
    // two tasks of one attempt could run at once
    expect([...names]).toEqual([`${delivery.id}-1-1`])
    await drainDueTasks(deps)
    expect(requestsFor(eventId)).toHaveLength(1)
  })

  it('a retrying delivery whose retry task is gone gets the attempt it waits for (seq and attempt number), at its time', async () => {
    script = () => ({ status: 500 })
    const { delivery } = await newDelivery()
    lose = true // the first attempt fails and its retry task vanishes
    await drainDueTasks(deps)
    lose = false
    script = () => ({ status: 200 })
    const retrying = (await deps.deliveries.get(delivery.id))!
    expect(retrying).toMatchObject({ status: 'retrying' })
    expect(enqueued.at(-1)!.name).toBe(`${delivery.id}-2-2`)

    clock.advance(Date.parse(retrying.next_attempt_at!) - clock.now() + minutes(11))
    await sweepStrandedDeliveries(deps)
    await drainDueTasks(deps)
    const done = (await deps.deliveries.get(delivery.id))!
    expect(done.status).toBe('succeeded')
    // mutation: awaitedJobOf gives a retrying delivery attempt 1 (or the wrong seq: the job is stale and never runs)
    expect(done.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 200],
    ])
  })

  it('a redelivered visit event whose delivery exists but whose task was never enqueued delivers it (and stays a duplicate)', async () => {
    const t = await tenant()
    const event = {
      id: `visit_${randomSuffix()}`,
      account_id: t.account.id,
      tier: 'company' as const,
      visit: {},
      resolution: { company: { name: 'Acme' }, resolved_by: 'test' },
    }
    const published = new Date(clock.now()).toISOString()
    lose = true
    const first = await handleVisitEvent(deps, event, published)
    lose = false
    expect(first.result).toBe('delivered')
    await drainDueTasks(deps)
    expect(requestsFor(event.id)).toHaveLength(0)

    // mutation: handle.ts returns 'duplicate' without resumeDelivery -> the delivery stays pending for good
    const again = await handleVisitEvent(deps, event, published)
    expect(again.result).toBe('duplicate')
    await drainDueTasks(deps)
    expect(requestsFor(event.id)).toHaveLength(1)
    expect((await deps.deliveries.get(deliveryIdFor(event.id, t.integration.id)))!.status).toBe('succeeded')
  })

  it('the sweeper runs at most once per interval, and a failing sweep never throws into the request', async () => {
    let calls = 0
    const failing = {
      ...deps,
      deliveries: {
        ...deps.deliveries,
        listDue: async () => {
          calls++
          throw new Error('store unavailable')
        },
      },
    }
    const sweeper = createDeliverySweeper(failing, minutes(5))
    await sweeper.maybeRun()
    await sweeper.maybeRun()
    // mutation: no interval check -> 2
    expect(calls).toBe(1)
    clock.advance(minutes(5))
    await expect(sweeper.maybeRun()).resolves.toBeUndefined()
    expect(calls).toBe(2)
  })
})
