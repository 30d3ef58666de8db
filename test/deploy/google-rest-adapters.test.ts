import { afterEach, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { cloudTasksQueueId, cloudTasksTaskId } from '@lsv/shared/adapters/google/cloud-tasks-scheduler.ts'
import { queueNameFor, taskNameFor } from '@lsv/shared/domain/webhooks/deliveries.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { ACCOUNT_ONLY, createTestTenant } from '../helpers/tenant.ts'
import { googleError, startRecorder, type RecordedRequest } from './support/recorder.ts'

/**
 * The Cloud Tasks and Secret Manager adapters with the REAL client libraries (@google-cloud/tasks,
 * @google-cloud/secret-manager over google-gax's REST transport), pointed by
 * CLOUD_TASKS_EMULATOR_HOST / SECRET_MANAGER_EMULATOR_HOST at a loopback server that records the
 * exact requests: what a local stand-in of either API has to answer, and what the adapters send.
 */
const PROJECT = 'lsv-test'
const REGION = 'europe-west1'
const DISPATCHER_URL = 'https://webhook-dispatcher-123.europe-west1.run.app'
const TASKS_SA = 'tasks-invoker@lsv-test.iam.gserviceaccount.com'
const LOCATION = `projects/${PROJECT}/locations/${REGION}`

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c()
})

async function tasksDeps(hostPort: string, service: 'portal-api' | 'webhook-dispatcher' | null = null) {
  const deps = await createTestDeps({
    env: {
      TASKS_BACKEND: 'cloudtasks',
      GOOGLE_CLOUD_PROJECT: PROJECT,
      GOOGLE_CLOUD_REGION: REGION,
      DISPATCHER_URL,
      TASKS_SERVICE_ACCOUNT: TASKS_SA,
      CLOUD_TASKS_EMULATOR_HOST: hostPort,
      WEBHOOK_ENDPOINT_RATE: '7',
    },
    ...(service ? { config: { service } } : {}),
  })
  closers.push(() => deps.cleanup())
  return deps
}

/** What every request of the REST transport carries: JSON, and no credentials towards a stand-in. */
function expectRestHeaders(req: RecordedRequest, routing: string) {
  expect(req.headers['content-type']).toBe('application/json')
  expect(req.headers.authorization).toBeUndefined()
  expect(req.headers['x-goog-request-params']).toBe(routing)
  expect(req.query.$alt).toBe('json;enum-encoding=int')
}

describe('Cloud Tasks adapter → Cloud Tasks REST v2 (real client, loopback stand-in)', () => {
  it('creates a queue, updates its rate when it exists, and creates named tasks carrying the OIDC token', async () => {
    let queueExists = false
    let taskExists = false
    const api = await startRecorder((req) => {
      if (req.method === 'POST' && req.path === `/v2/${LOCATION}/queues`) {
        if (queueExists) return googleError(409, 'ALREADY_EXISTS')
        queueExists = true
        return { status: 200, body: req.json }
      }
      if (req.method === 'POST' && req.path.endsWith('/tasks')) {
        if (taskExists) return googleError(409, 'ALREADY_EXISTS')
        taskExists = true
        return { status: 200, body: (req.json as { task: unknown }).task }
      }
      return { status: 200, body: {} }
    })
    closers.push(api.close)
    const deps = await tasksDeps(api.hostPort)
    const queueId = cloudTasksQueueId('endpoint:int_1')
    const queuePath = `${LOCATION}/queues/${queueId}`

    await deps.tasks.ensureQueue('endpoint:int_1', { maxDispatchesPerSecond: 7, maxConcurrentDispatches: 5 })
    const again = await tasksDeps(api.hostPort) // another process: the queue exists now
    await again.tasks.ensureQueue('endpoint:int_1', { maxDispatchesPerSecond: 9, maxConcurrentDispatches: 5 })
    const at = new Date('2026-09-04T12:00:01.250Z')
    await deps.tasks.enqueue({ queue: 'endpoint:int_1', name: 'dlv_1-1-1', payload: Buffer.from('{"v":1}'), scheduleAt: at })
    await deps.tasks.enqueue({ queue: 'endpoint:int_1', name: 'dlv_1-1-1', payload: Buffer.from('{"v":1}'), scheduleAt: at }) // duplicate: ignored

    expect(api.requests.map((r) => [r.method, r.path])).toEqual([
      ['POST', `/v2/${LOCATION}/queues`],
      ['POST', `/v2/${LOCATION}/queues`],
      ['PATCH', `/v2/${queuePath}`],
      ['POST', `/v2/${queuePath}/tasks`],
      ['POST', `/v2/${queuePath}/tasks`],
    ])
    const [create, , patch, task] = api.requests as [RecordedRequest, RecordedRequest, RecordedRequest, RecordedRequest]
    expectRestHeaders(create, `parent=${encodeURIComponent(LOCATION)}`)
    expect(create.json).toEqual({
      name: queuePath,
      rateLimits: { maxDispatchesPerSecond: 7, maxConcurrentDispatches: 5 },
      retryConfig: { maxAttempts: 100, minBackoff: '1s', maxBackoff: '300s', maxDoublings: 8, maxRetryDuration: '86400s' },
    })
    expectRestHeaders(patch, `queue.name=${encodeURIComponent(queuePath)}`)
    // queue.name is bound to the path by the HTTP rule, so the body holds only the changed fields
    expect(patch.json).toEqual({
      rateLimits: { maxDispatchesPerSecond: 9, maxConcurrentDispatches: 5 },
      retryConfig: { maxAttempts: 100, minBackoff: '1s', maxBackoff: '300s', maxDoublings: 8, maxRetryDuration: '86400s' },
    })
    expect(patch.query).toEqual({
      $alt: 'json;enum-encoding=int',
      updateMask:
        'rate_limits.max_dispatches_per_second,rate_limits.max_concurrent_dispatches,retry_config.max_attempts,retry_config.min_backoff,retry_config.max_backoff,retry_config.max_doublings,retry_config.max_retry_duration',
    })
    expect(Object.keys(create.query)).toEqual(['$alt'])
    expect(Object.keys(task.query)).toEqual(['$alt'])
    expectRestHeaders(task, `parent=${encodeURIComponent(queuePath)}`)
    expect(task.json).toEqual({
      task: {
        name: `${queuePath}/tasks/${cloudTasksTaskId('dlv_1-1-1')}`,
        scheduleTime: '2026-09-04T12:00:01.250Z',
        httpRequest: {
          url: `${DISPATCHER_URL}/tasks/deliver`,
          httpMethod: 1, // HttpMethod.POST (the REST transport asks for int enums)
          headers: { 'Content-Type': 'application/json', 'X-Delivery-Queue': 'endpoint:int_1' },
          body: Buffer.from('{"v":1}').toString('base64'),
          oidcToken: { serviceAccountEmail: TASKS_SA, audience: DISPATCHER_URL },
        },
      },
    })
  })

  it('replay from the management API (portal-api) creates a task for the dispatcher, with its identity and audience', async () => {
    const api = await startRecorder((req) => ({
      status: 200,
      body: req.method === 'POST' && req.path.endsWith('/tasks') ? (req.json as { task: unknown }).task : req.json,
    }))
    closers.push(api.close)
    const deps = await tasksDeps(api.hostPort, 'portal-api')
    const portal = await buildPortal(deps)
    closers.push(() => portal.close())
    const tenant = await createTestTenant(deps, { ...ACCOUNT_ONLY, integration: { url: 'https://receiver.example/hook' } })
    const now = new Date().toISOString()
    const delivery: DeliveryRecord = {
      id: `dlv_${randomUUID().replaceAll('-', '')}`,
      account_id: tenant.account.id,
      integration_id: tenant.integration.id,
      event_id: 'visit_1',
      status: 'failed',
      attempts: [],
      body: '{"id":"visit_1"}',
      next_attempt_at: null,
      created_at: now,
      updated_at: now,
    }
    await deps.deliveries.put(delivery)

    const res = await portal.inject({
      method: 'POST',
      url: `/api/v1/admin/accounts/${tenant.account.id}/integrations/${tenant.integration.id}/deliveries/${delivery.id}/replay`,
      headers: { authorization: 'Bearer test-operator-token' },
    })
    expect(res.statusCode).toBeLessThan(300)
    const created = api.requests.filter((r) => r.path.endsWith('/tasks'))
    expect(created).toHaveLength(1)
    const queuePath = `${LOCATION}/queues/${cloudTasksQueueId(queueNameFor(tenant.integration.id))}`
    expect(created[0]!.path).toBe(`/v2/${queuePath}/tasks`)
    const task = (created[0]!.json as { task: { name: string; httpRequest: { url: string; body: string; oidcToken: unknown } } }).task
    expect(task.name).toBe(`${queuePath}/tasks/${cloudTasksTaskId(taskNameFor(delivery.id, 1, 1))}`)
    expect(task.httpRequest.url).toBe(`${DISPATCHER_URL}/tasks/deliver`)
    expect(task.httpRequest.oidcToken).toEqual({ serviceAccountEmail: TASKS_SA, audience: DISPATCHER_URL })
    expect(JSON.parse(Buffer.from(task.httpRequest.body, 'base64').toString('utf8'))).toEqual({ v: 1, delivery_id: delivery.id, seq: 1, attempt: 1 })
    // the endpoint queue got WEBHOOK_ENDPOINT_RATE
    const queue = api.requests.find((r) => r.path === `/v2/${LOCATION}/queues`)
    expect(queue, 'the queue-creating request').toBeDefined()
    expect((queue!.json as { rateLimits: unknown }).rateLimits).toMatchObject({ maxDispatchesPerSecond: 7 })
  })
})

describe('Secret Manager adapter → Secret Manager REST v1 (real client, loopback stand-in)', () => {
  it('reads the latest version, maps NOT_FOUND to null, and adds versions (creating the secret once)', async () => {
    const store = new Map<string, string[]>([['key-pepper', [Buffer.from('pepper-1').toString('base64')]]])
    const secretOf = (path: string) => /^\/v1\/projects\/lsv-test\/secrets\/([^/:]+)/.exec(path)?.[1] ?? ''
    const api = await startRecorder((req) => {
      const id = secretOf(req.path)
      if (req.method === 'GET' && req.path.endsWith('/versions/latest:access')) {
        const versions = store.get(id)
        if (!versions?.length) return googleError(404, 'NOT_FOUND')
        return { status: 200, body: { name: `projects/lsv-test/secrets/${id}/versions/${versions.length}`, payload: { data: versions.at(-1) } } }
      }
      if (req.method === 'POST' && req.path.endsWith(':addVersion')) {
        const versions = store.get(id)
        if (!versions) return googleError(404, 'NOT_FOUND')
        versions.push((req.json as { payload: { data: string } }).payload.data)
        return { status: 200, body: { name: `projects/lsv-test/secrets/${id}/versions/${versions.length}` } }
      }
      if (req.method === 'POST' && req.path === '/v1/projects/lsv-test/secrets') {
        store.set(req.query.secretId!, [])
        return { status: 200, body: { name: `projects/lsv-test/secrets/${req.query.secretId}` } }
      }
      return googleError(400, 'INVALID_ARGUMENT')
    })
    closers.push(api.close)
    const deps = await createTestDeps({
      env: { SECRETS_BACKEND: 'secretmanager', GOOGLE_CLOUD_PROJECT: 'lsv-test', SECRET_MANAGER_EMULATOR_HOST: api.hostPort },
    })
    closers.push(() => deps.cleanup())

    expect(await deps.secrets.get('key-pepper')).toBe('pepper-1')
    expect(await deps.secrets.get('link-signing-keys')).toBeNull()
    await deps.secrets.addVersion('link-signing-keys', '{"current":"k1"}')
    expect(await deps.secrets.get('link-signing-keys')).toBe('{"current":"k1"}')

    expect(api.requests.map((r) => [r.method, r.path, r.query.secretId ?? null])).toEqual([
      ['GET', '/v1/projects/lsv-test/secrets/key-pepper/versions/latest:access', null],
      ['GET', '/v1/projects/lsv-test/secrets/link-signing-keys/versions/latest:access', null],
      ['POST', '/v1/projects/lsv-test/secrets/link-signing-keys:addVersion', null],
      ['POST', '/v1/projects/lsv-test/secrets', 'link-signing-keys'],
      ['POST', '/v1/projects/lsv-test/secrets/link-signing-keys:addVersion', null],
      ['GET', '/v1/projects/lsv-test/secrets/link-signing-keys/versions/latest:access', null],
    ])
    const [read, , add, create] = api.requests as [RecordedRequest, RecordedRequest, RecordedRequest, RecordedRequest]
    expectRestHeaders(read, `name=${encodeURIComponent('projects/lsv-test/secrets/key-pepper/versions/latest')}`)
    expect(read.json).toBeNull()
    expectRestHeaders(add, `parent=${encodeURIComponent('projects/lsv-test/secrets/link-signing-keys')}`)
    expect(add.json).toEqual({ payload: { data: Buffer.from('{"current":"k1"}').toString('base64') } })
    expectRestHeaders(create, `parent=${encodeURIComponent('projects/lsv-test')}`)
    // protobuf's JSON form sends the secret's map fields, empty
    expect(create.json).toEqual({ replication: { automatic: {} }, labels: {}, annotations: {}, tags: {}, versionAliases: {} })
    expect(create.query).toEqual({ $alt: 'json;enum-encoding=int', secretId: 'link-signing-keys' })
  })
})
