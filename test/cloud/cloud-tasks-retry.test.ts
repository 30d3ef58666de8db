/**
 * What the Cloud Tasks stand-in does with a failed task, as Cloud Tasks documents it: deleted
 * only once maxAttempts *and* maxRetryDuration are both reached (-1 / 0 unlimited; 31 days of
 * retention at most), the backoff (minBackoff doubling maxDoublings times, then linear, capped),
 * a 429/503's Retry-After respected, the dispatch deadline's range; and the scheduler's queues
 * getting the dispatcher-outage retry config, also when the queue already existed with the old one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import { CloudTasksClient } from '@google-cloud/tasks'
import { standInClientOptions } from '@lsv/shared/adapters/google/stand-in-client.ts'
import { cloudTasksQueueId, createCloudTasksScheduler, QUEUE_RETRY_CONFIG } from '@lsv/shared/adapters/google/cloud-tasks-scheduler.ts'
import { createCloudTasksStandIn, exhaustion, retryAfterOf, type CloudTasksStandIn, type RetryConfig } from '../../scripts/lib/cloud/cloud-tasks-stand-in.ts'
import { createIam } from '../../scripts/lib/cloud/iam.ts'
import { startOidcIssuer, type OidcIssuer } from '../../scripts/lib/cloud/oidc-issuer.ts'
import { sleep } from './support.ts'

const PROJECT = 'demo-tasks-retry'
const DISPATCHER = `webhook-dispatcher@${PROJECT}.iam.gserviceaccount.com`
const ROLE = `projects/${PROJECT}/roles/lsvDeliveryQueues`
const H = 3_600_000

describe('Cloud Tasks stand-in: retry limits, backoff, Retry-After, dispatch deadline', () => {
  it('deletes a task only when maxAttempts and maxRetryDuration are both reached; -1 and 0 are unlimited; 31 days at most', () => {
    const plan: RetryConfig = { maxAttempts: 100, minBackoffMs: 1000, maxBackoffMs: 300_000, maxDoublings: 8, maxRetryDurationMs: 24 * H }
    const task = { createMs: 0, firstAttemptMs: 0 }
    // mutation: either limit alone deletes (the stand-in's old `||`) -> dropped at attempt 100 after 8 h
    expect(exhaustion(plan, task, 100, 8 * H)).toBeNull()
    expect(exhaustion(plan, task, 3, 25 * H)).toBeNull()
    expect(exhaustion(plan, task, 101, 24 * H)).toMatch(/retries exhausted/)
    // the old plan: 3 attempts, no duration -> gone after the third failure, whatever the time
    const old: RetryConfig = { maxAttempts: 3, minBackoffMs: 1000, maxBackoffMs: 10_000, maxDoublings: 16, maxRetryDurationMs: 0 }
    expect(exhaustion(old, task, 2, 3000)).toBeNull()
    expect(exhaustion(old, task, 3, 3000)).toMatch(/maxAttempts/)
    const forever: RetryConfig = { ...plan, maxAttempts: -1, maxRetryDurationMs: 0 }
    expect(exhaustion(forever, task, 10_000, 30 * 24 * H)).toBeNull()
    expect(exhaustion(forever, task, 10_000, 31 * 24 * H)).toMatch(/retention/)
    // -1 attempts with a duration: attempts are never "reached", so only retention ends it
    expect(exhaustion({ ...plan, maxAttempts: -1 }, task, 10_000, 48 * H)).toBeNull()
  })

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterOf('7')).toBe(7000)
    expect(retryAfterOf(new Date(10_000).toUTCString(), 4000)).toBe(6000)
    expect(retryAfterOf('soon')).toBeNull()
    expect(retryAfterOf(null)).toBeNull()
  })

  describe('over HTTP, through @google-cloud/tasks', () => {
    let issuer: OidcIssuer
    let standIn: CloudTasksStandIn
    let receiver: Server
    let target: string
    let client: CloudTasksClient
    const hits: number[] = []
    let answers: Array<{ status: number; headers?: Record<string, string> }> = []
    const logs: unknown[] = []
    const location = `projects/${PROJECT}/locations/europe-west1`

    beforeAll(async () => {
      issuer = await startOidcIssuer()
      receiver = createServer((req, res) => {
        req.resume()
        req.on('end', () => {
          hits.push(Date.now())
          const a = answers.shift() ?? { status: 200 }
          res.writeHead(a.status, a.headers ?? {}).end()
        })
      })
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
      target = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`
      const iam = createIam([{ member: `serviceAccount:${DISPATCHER}`, role: ROLE, resource: 'project' }], {
        [ROLE]: ['cloudtasks.queues.create', 'cloudtasks.queues.update', 'cloudtasks.queues.get', 'cloudtasks.tasks.create', 'cloudtasks.tasks.get'],
      })
      standIn = createCloudTasksStandIn({ project: PROJECT, issuer, iam, log: (l) => logs.push(l), cloudRunServiceAt: () => null })
      const listener = await standIn.listenFor(DISPATCHER)
      client = new CloudTasksClient(await standInClientOptions(`127.0.0.1:${listener.port}`))
    })
    afterAll(async () => {
      await client.close()
      await standIn.close()
      await issuer.close()
      await new Promise((resolve) => receiver.close(resolve))
    })

    it("ensureQueue gives a queue that already existed with the old 3-attempt config the outage plan (the scheduler's update mask)", async () => {
      const name = `${location}/queues/${cloudTasksQueueId('int-old')}`
      await client.createQueue({
        parent: location,
        queue: {
          name,
          rateLimits: { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 2 },
          retryConfig: { maxAttempts: 3, minBackoff: { seconds: 1 }, maxBackoff: { seconds: 10 } },
        },
      })
      const scheduler = createCloudTasksScheduler(client, {
        project: PROJECT,
        location: 'europe-west1',
        targetUrl: `${target}/t`,
        serviceAccountEmail: DISPATCHER,
        audience: target,
      })
      await scheduler.ensureQueue('int-old', { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 2 })
      const [queue] = await client.getQueue({ name })
      // mutation: the update mask without retry_config.* -> maxAttempts stays 3
      expect(queue.retryConfig).toMatchObject({
        maxAttempts: QUEUE_RETRY_CONFIG.maxAttempts,
        maxDoublings: 8,
        minBackoff: { seconds: '1' },
        maxBackoff: { seconds: '300' },
        maxRetryDuration: { seconds: String(24 * 3600) },
      })
    })

    it('a 503 with Retry-After is not retried before it', async () => {
      const name = `${location}/queues/fast`
      await client.createQueue({
        parent: location,
        queue: { name, retryConfig: { maxAttempts: 5, minBackoff: { nanos: 100_000_000 }, maxBackoff: { seconds: 10 } } },
      })
      answers = [{ status: 503, headers: { 'retry-after': '2' } }, { status: 200 }]
      hits.length = 0
      await client.createTask({ parent: name, task: { httpRequest: { url: `${target}/a`, httpMethod: 'POST' } } })
      for (let i = 0; i < 100 && hits.length < 2; i++) await sleep(100)
      expect(hits, JSON.stringify(logs)).toHaveLength(2)
      // mutation: Retry-After ignored -> the retry comes after minBackoff (0.1 s)
      expect(hits[1]! - hits[0]!).toBeGreaterThanOrEqual(1900)
    })

    it('refuses a dispatch deadline outside 15 s to 30 min and reports the 10 min default', async () => {
      const name = `${location}/queues/deadline`
      await client.createQueue({ parent: location, queue: { name } })
      await expect(
        client.createTask({ parent: name, task: { dispatchDeadline: { seconds: 5 }, httpRequest: { url: `${target}/d`, httpMethod: 'POST' } } }),
      ).rejects.toMatchObject({ code: 3 })
      const [task] = await client.createTask({
        parent: name,
        task: { scheduleTime: { seconds: Math.floor(Date.now() / 1000) + 3600 }, httpRequest: { url: `${target}/d`, httpMethod: 'POST' } },
      })
      expect(task.dispatchDeadline).toMatchObject({ seconds: '600' })
    })
  })
})
