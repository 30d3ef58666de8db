import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTaskScheduler } from '@lsv/shared/adapters/embedded/task-scheduler.ts'
import {
  cloudTasksQueueId,
  cloudTasksTaskId,
  createCloudTasksScheduler,
  type CloudTasksApi,
  type CreateQueueRequest,
  type CreateTaskRequest,
  type UpdateQueueRequest,
  QUEUE_RETRY_CONFIG,
} from '@lsv/shared/adapters/google/cloud-tasks-scheduler.ts'
import { QueueQuotaError, QueueUnavailableError } from '@lsv/shared/errors/queue-errors.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { taskSchedulerConformance } from './suites/task-scheduler.ts'

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' })

describe('task scheduler: embedded (node:sqlite)', () => {
  taskSchedulerConformance(async (options) => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    const clock = new ManualClock()
    const scheduler = createEmbeddedTaskScheduler(db, { clock, logger, pollIntervalMs: 10, ...options })
    return {
      scheduler,
      clock,
      async close() {
        await scheduler.close()
        db.close()
        dir.cleanup()
      },
    }
  })

  describe('embedded only', () => {
    const cleanups: Array<() => void> = []
    afterEach(() => {
      for (const c of cleanups.splice(0)) c()
    })

    it('keeps queued tasks and their dedupe names across a reopen of the file', async () => {
      const dir = tempDataDir()
      cleanups.push(() => dir.cleanup())
      const clock = new ManualClock()
      const db1 = openEmbeddedDb(dir.dir)
      const s1 = createEmbeddedTaskScheduler(db1, { clock, logger })
      await s1.ensureQueue('q', { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 1 })
      await s1.enqueue({ queue: 'q', name: 'kept', payload: Buffer.from('1') })
      await s1.close()
      db1.close()

      const db2 = openEmbeddedDb(dir.dir)
      cleanups.push(() => db2.close())
      const s2 = createEmbeddedTaskScheduler(db2, { clock, logger })
      await s2.enqueue({ queue: 'q', name: 'kept', payload: Buffer.from('2') })
      const payloads: string[] = []
      expect(await s2.runDue(async (p) => void payloads.push(p.toString()))).toBe(1)
      expect(payloads).toEqual(['1'])
      await s2.close()
    })

    it('a failed task whose reschedule write is refused (the file locked) runs again after its backoff, not after its 10-minute lease', async () => {
      const dir = tempDataDir()
      cleanups.push(() => dir.cleanup())
      const clock = new ManualClock()
      const db = openEmbeddedDb(dir.dir)
      cleanups.push(() => void db.close())
      // the reschedule's UPDATE refused once, as a write past the busy timeout is under load
      let refuseNext = false
      db.db.function('test_refuse_once', () => {
        const refuse = refuseNext
        refuseNext = false
        return refuse ? 1 : 0
      })
      const scheduler = createEmbeddedTaskScheduler(db, { clock, logger, retryBackoffMs: 1_000 })
      db.db.exec(`CREATE TEMP TRIGGER refuse_reschedule BEFORE UPDATE OF run_at ON main.task_tasks WHEN test_refuse_once()
        BEGIN SELECT RAISE(ABORT, 'database is locked'); END;`)
      await scheduler.ensureQueue('q', { maxDispatchesPerSecond: 10, maxConcurrentDispatches: 5 })
      await scheduler.enqueue({ queue: 'q', name: `t-${Math.random().toString(36).slice(2)}`, payload: Buffer.from('p') })
      const counts: number[] = []
      const handler = async (_payload: Buffer, meta: { dispatchCount: number }) => {
        counts.push(meta.dispatchCount)
        if (meta.dispatchCount > 1) return
        refuseNext = true
        throw new Error('receiver down')
      }
      expect(await scheduler.runDue(handler)).toBe(1)
      expect(await scheduler.runDue(handler)).toBe(0) // backing off
      clock.advance(2_000)
      expect(await scheduler.runDue(handler)).toBe(1)
      expect(counts).toEqual([1, 2])
      await scheduler.close()
    })
  })
})

/** A stand-in for CloudTasksClient that records requests and fails as told. */
function fakeCloudTasks() {
  const calls: Array<{ method: string; request: CreateTaskRequest | CreateQueueRequest | UpdateQueueRequest }> = []
  const failures: Record<string, Array<{ code: number }>> = {}
  const call = (method: string) => async (request: never) => {
    calls.push({ method, request })
    const failure = failures[method]?.shift()
    if (failure) throw Object.assign(new Error(`fake ${method} failed`), failure)
    return [{}]
  }
  const client: CloudTasksApi = { createTask: call('createTask'), createQueue: call('createQueue'), updateQueue: call('updateQueue') }
  return { client, calls, failWith: (method: string, code: number) => (failures[method] ??= []).push({ code }) }
}

describe('task scheduler: Cloud Tasks requests (fake client)', () => {
  const options = {
    project: 'lsv-prod',
    location: 'europe-west1',
    targetUrl: 'https://dispatcher.example/tasks/deliver',
    serviceAccountEmail: 'tasks@lsv-prod.iam.gserviceaccount.com',
    audience: 'https://dispatcher.example',
  }
  const parent = 'projects/lsv-prod/locations/europe-west1/queues/int-abc'

  it('creates a named HTTP task with OIDC token, headers, body and schedule time', async () => {
    const fake = fakeCloudTasks()
    const scheduler = createCloudTasksScheduler(fake.client, options)
    const payload = Buffer.from('{"delivery_id":"d1"}')
    await scheduler.enqueue({ queue: 'int-abc', name: 'delivery:d1:1', payload, scheduleAt: new Date('2026-09-04T12:00:01.250Z') })
    expect(fake.calls).toEqual([
      {
        method: 'createTask',
        request: {
          parent,
          task: {
            name: `${parent}/tasks/${cloudTasksTaskId('delivery:d1:1')}`,
            scheduleTime: { seconds: Date.parse('2026-09-04T12:00:01Z') / 1000, nanos: 250_000_000 },
            httpRequest: {
              url: 'https://dispatcher.example/tasks/deliver',
              httpMethod: 'POST',
              headers: { 'Content-Type': 'application/json', 'X-Delivery-Queue': 'int-abc' },
              body: payload,
              oidcToken: { serviceAccountEmail: 'tasks@lsv-prod.iam.gserviceaccount.com', audience: 'https://dispatcher.example' },
            },
          },
        },
      },
    ])
  })

  it('omits scheduleTime for an immediate task', async () => {
    const fake = fakeCloudTasks()
    await createCloudTasksScheduler(fake.client, options).enqueue({ queue: 'int-abc', name: 'n', payload: Buffer.from('{}') })
    expect((fake.calls[0]!.request as CreateTaskRequest).task).not.toHaveProperty('scheduleTime')
  })

  it('treats ALREADY_EXISTS on createTask as deduplicated and rethrows other errors', async () => {
    const fake = fakeCloudTasks()
    const scheduler = createCloudTasksScheduler(fake.client, options)
    fake.failWith('createTask', 6)
    await expect(scheduler.enqueue({ queue: 'int-abc', name: 'n', payload: Buffer.from('{}') })).resolves.toBeUndefined()
    fake.failWith('createTask', 14)
    await expect(scheduler.enqueue({ queue: 'int-abc', name: 'n2', payload: Buffer.from('{}') })).rejects.toMatchObject({ code: 14 })
  })

  it('derives task ids from names: stable, distinct, only [A-Za-z0-9_-]', () => {
    const a = cloudTasksTaskId('delivery/ä b?#1')
    expect(a).toMatch(/^[A-Za-z0-9_-]{1,500}$/)
    expect(cloudTasksTaskId('delivery/ä b?#1')).toBe(a)
    expect(cloudTasksTaskId('delivery/ä b?#2')).not.toBe(a)
  })

  it('derives valid, distinct queue ids from queue keys', () => {
    expect(cloudTasksQueueId('int-abc')).toBe('int-abc')
    const odd = cloudTasksQueueId('integration:acc_1/ABC')
    expect(odd).toMatch(/^[A-Za-z0-9-]{1,100}$/)
    expect(cloudTasksQueueId('integration:acc_1/ABD')).not.toBe(odd)
    expect(cloudTasksQueueId('x'.repeat(150))).toMatch(/^[A-Za-z0-9-]{1,100}$/)
    expect(cloudTasksQueueId('___')).toMatch(/^[A-Za-z0-9-]{1,100}$/)
  })

  it('ensureQueue creates the queue with its rate and a retry config that outlasts a dispatcher outage', async () => {
    const fake = fakeCloudTasks()
    await createCloudTasksScheduler(fake.client, options).ensureQueue('int-abc', { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 3 })
    expect(fake.calls).toEqual([
      {
        method: 'createQueue',
        request: {
          parent: 'projects/lsv-prod/locations/europe-west1',
          queue: {
            name: parent,
            rateLimits: { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 3 },
            // the dispatcher-outage plan (cloud-tasks-scheduler.ts): 1 s doubling 8 times to 5 min, dropped after 24 h and 100 attempts
            retryConfig: { maxAttempts: 100, minBackoff: { seconds: 1 }, maxBackoff: { seconds: 300 }, maxDoublings: 8, maxRetryDuration: { seconds: 86400 } },
          },
        },
      },
    ])
  })

  it('ensureQueue updates the rate of an existing queue, and skips the API when the rate is unchanged', async () => {
    const fake = fakeCloudTasks()
    const scheduler = createCloudTasksScheduler(fake.client, options)
    fake.failWith('createQueue', 6)
    await scheduler.ensureQueue('int-abc', { maxDispatchesPerSecond: 2, maxConcurrentDispatches: 1 })
    expect(fake.calls[1]).toEqual({
      method: 'updateQueue',
      request: {
        // the retry config too: a queue an older version created had 3 attempts in ~3 s
        queue: { name: parent, rateLimits: { maxDispatchesPerSecond: 2, maxConcurrentDispatches: 1 }, retryConfig: QUEUE_RETRY_CONFIG },
        updateMask: {
          paths: [
            'rate_limits.max_dispatches_per_second',
            'rate_limits.max_concurrent_dispatches',
            'retry_config.max_attempts',
            'retry_config.min_backoff',
            'retry_config.max_backoff',
            'retry_config.max_doublings',
            'retry_config.max_retry_duration',
          ],
        },
      },
    })
    await scheduler.ensureQueue('int-abc', { maxDispatchesPerSecond: 2, maxConcurrentDispatches: 1 })
    expect(fake.calls).toHaveLength(2)
    await scheduler.ensureQueue('int-abc', { maxDispatchesPerSecond: 4, maxConcurrentDispatches: 1 })
    expect(fake.calls).toHaveLength(3)
  })

  it('maps RESOURCE_EXHAUSTED on createQueue to QueueQuotaError and NOT_FOUND on createTask to QueueUnavailableError', async () => {
    const fake = fakeCloudTasks()
    const scheduler = createCloudTasksScheduler(fake.client, options)
    fake.failWith('createQueue', 8)
    // mutation: rethrow the raw error -> the pool never takes over when the quota is spent
    await expect(scheduler.ensureQueue('int-new', { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 })).rejects.toBeInstanceOf(QueueQuotaError)
    // nothing else was tried: no update of a queue that does not exist
    expect(fake.calls.map((c) => c.method)).toEqual(['createQueue'])
    fake.failWith('createTask', 5)
    await expect(scheduler.enqueue({ queue: 'int-new', name: 'n', payload: Buffer.from('{}') })).rejects.toBeInstanceOf(QueueUnavailableError)
    fake.failWith('createTask', 9)
    await expect(scheduler.enqueue({ queue: 'int-new', name: 'n', payload: Buffer.from('{}') })).rejects.toBeInstanceOf(QueueUnavailableError)
  })

  it('ensureQueue rethrows errors other than ALREADY_EXISTS', async () => {
    const fake = fakeCloudTasks()
    fake.failWith('createQueue', 7)
    await expect(
      createCloudTasksScheduler(fake.client, options).ensureQueue('q', { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 }),
    ).rejects.toMatchObject({ code: 7 })
  })

  it('start() is a no-op that resolves a closable handle', async () => {
    const fake = fakeCloudTasks()
    const scheduler = createCloudTasksScheduler(fake.client, options)
    const running = await scheduler.start(async () => {})
    await running.close()
    await scheduler.close()
    expect(fake.calls).toEqual([])
  })
})
