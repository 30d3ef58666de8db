/**
 * Which queue an endpoint's deliveries go on (shared/src/domain/webhooks/queue-pool.ts), with
 * the embedded stores and a scheduler that records what it is asked: the first endpoints get a
 * queue of their own, the next ones a pool queue; the choice is recorded and every later process
 * keeps it; a new queue that does not take tasks yet sends them to the pool at once, reported
 * once as `queue.created_late`. (The Cloud Tasks side, with its quota: test/cloud/queue-pool.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import pino from 'pino'
import { createDelivery, queueNameFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { isPoolQueue } from '@lsv/shared/domain/webhooks/queue-pool.ts'
import { QueueUnavailableError } from '@lsv/shared/errors/queue-errors.ts'
import type { TaskRequest, TaskScheduler } from '@lsv/shared/ports/task-scheduler.ts'
import type { IntegrationRecord } from '@lsv/shared/model/records.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/** A scheduler that records queues and tasks; enqueue on a queue in `notReady` fails as a new Cloud Tasks queue does. */
function recordingScheduler(notReady: Set<string> = new Set()) {
  const ensured: string[] = []
  const enqueued: TaskRequest[] = []
  const tasks: TaskScheduler = {
    ensureQueue: async (queue) => void ensured.push(queue),
    enqueue: async (task) => {
      if (notReady.has(task.queue)) throw new QueueUnavailableError(task.queue)
      enqueued.push(task)
    },
    start: async () => ({ close: async () => {} }),
    close: async () => {},
  }
  return { tasks, ensured, enqueued }
}

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) })
  return { logger, lines }
}

describe('queue pool: which queue an endpoint uses', () => {
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let tenant: StoredTenant
  beforeAll(async () => {
    deps = await createTestDeps({ env: { TASK_QUEUE_DEDICATED_LIMIT: '2', TASK_QUEUE_POOL_SIZE: '4' } })
    tenant = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: 'https://receiver.example/hook' } })
  })
  afterAll(() => deps.cleanup())

  async function newEndpoint(): Promise<IntegrationRecord> {
    const record = { ...tenant.integration, id: `int_${randomUUID().replaceAll('-', '')}` }
    await deps.tenants.createIntegration(record)
    return record
  }
  const deliver = (d: Parameters<typeof createDelivery>[0], integrationId: string) =>
    createDelivery(d, { accountId: tenant.account.id, integrationId, eventId: `evt_${randomUUID()}`, body: '{}', now: new Date().toISOString() })

  it('gives the first endpoints their own queue and the next ones a pool queue, and every later process keeps the choice', async () => {
    const first = recordingScheduler()
    const endpoints = [await newEndpoint(), await newEndpoint(), await newEndpoint(), await newEndpoint()]
    for (const e of endpoints) await deliver({ ...deps, tasks: first.tasks }, e.id)
    const queues = first.enqueued.map((t) => t.queue)
    // mutation: the count compared with < instead of <= -> only one endpoint gets its own queue
    expect(queues.slice(0, 2)).toEqual([queueNameFor(endpoints[0]!.id), queueNameFor(endpoints[1]!.id)])
    expect(queues.slice(2).every(isPoolQueue)).toBe(true)
    for (const [i, e] of endpoints.entries()) expect((await deps.tenants.getIntegration(e.id))?.delivery_queue).toBe(queues[i])

    // another process (its own scheduler, nothing remembered): the same queues, no new decision
    const later = recordingScheduler()
    for (const e of endpoints) await deliver({ ...deps, tasks: later.tasks }, e.id)
    // mutation: the recorded delivery_queue ignored -> the count is past the limit now and the
    // first two endpoints would move to the pool
    expect(later.enqueued.map((t) => t.queue)).toEqual(queues)
  })

  it('puts the tasks of an endpoint whose new queue does not take tasks yet on its pool queue at once, reported once', async () => {
    const own = await newEndpoint()
    const d = await createTestDeps({ env: { TASK_QUEUE_DEDICATED_LIMIT: '100', TASK_QUEUE_POOL_SIZE: '4' } })
    try {
      const t = await createTestTenant(d, { ...ACCOUNT_ONLY, integration: { url: 'https://receiver.example/hook' } })
      await d.tenants.createIntegration({ ...t.integration, id: own.id })
      const scheduler = recordingScheduler(new Set([queueNameFor(own.id)]))
      const log = capturingLogger()
      const withLog = { ...d, tasks: scheduler.tasks, logger: log.logger }
      for (let i = 0; i < 2; i++)
        await createDelivery(withLog, {
          accountId: t.account.id,
          integrationId: own.id,
          eventId: `evt_${randomUUID()}`,
          body: '{}',
          now: new Date().toISOString(),
        })
      // the endpoint keeps its own queue as its choice; its tasks went to the pool meanwhile
      expect((await d.tenants.getIntegration(own.id))?.delivery_queue).toBe(queueNameFor(own.id))
      // mutation: QueueUnavailableError not caught in enqueueOnDeliveryQueue -> createDelivery throws
      expect(scheduler.enqueued).toHaveLength(2)
      expect(scheduler.enqueued.every((task) => isPoolQueue(task.queue))).toBe(true)
      const late = log.lines.filter((l) => l.event === 'queue.created_late')
      expect(late).toEqual([expect.objectContaining({ queue: queueNameFor(own.id), integrationId: own.id })])
    } finally {
      await d.cleanup()
    }
  })
})
