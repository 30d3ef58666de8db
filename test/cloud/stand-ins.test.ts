/**
 * The Cloud Tasks and Secret Manager stand-ins, driven by what the services really use: the
 * Google client libraries pointed at them (standInClientOptions: REST transport, no credentials)
 * behind the platform's own adapters. A task is delivered at its time with an ID token the
 * services' verifier accepts, a failure is retried, names de-duplicate; a call the IAM grants do
 * not allow fails with PERMISSION_DENIED as in Google Cloud, and a task to a Cloud Run service
 * whose identity may not invoke it gets Cloud Run's 403 without reaching the service. A task that
 * passes reaches the service as behind Cloud Run's front end, its token's signature stripped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CloudTasksClient } from '@google-cloud/tasks'
import { SecretManagerServiceClient } from '@google-cloud/secret-manager'
import { standInClientOptions } from '@lsv/shared/adapters/google/stand-in-client.ts'
import { cloudTasksQueueId, cloudTasksTaskId, createCloudTasksScheduler } from '@lsv/shared/adapters/google/cloud-tasks-scheduler.ts'
import { createSecretManagerSecrets } from '@lsv/shared/adapters/google/secret-manager-secrets.ts'
import { randomUUID } from 'node:crypto'
import { createOidcVerifier } from '@lsv/shared/http/oidc.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createCloudTasksStandIn, type CloudTasksStandIn } from '../../scripts/lib/cloud/cloud-tasks-stand-in.ts'
import { createSecretManagerStandIn } from '../../scripts/lib/cloud/secret-manager-stand-in.ts'
import { openSecretStore } from '../../scripts/lib/cloud/secret-store.ts'
import { createIam } from '../../scripts/lib/cloud/iam.ts'
import { newFrontEndSecret } from '../../scripts/lib/cloud/front-end.ts'
import { startOidcIssuer, type OidcIssuer } from '../../scripts/lib/cloud/oidc-issuer.ts'
import { sleep } from './support.ts'

const PROJECT = 'demo-stand-ins'
const sa = (name: string) => `${name}@${PROJECT}.iam.gserviceaccount.com`
const DISPATCHER = sa('webhook-dispatcher')
const INVOKER = sa('tasks-invoker')
const ROLE = `projects/${PROJECT}/roles/lsvDeliveryQueues`

interface Hit {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

/**
 * What infra/ grants around the dispatcher's queue: the dispatcher enqueues and acts as the
 * invoker, and (as the dispatcher's Cloud Run service) only the invoker identity may be called.
 */
const DISPATCHER_GRANTS = [
  { member: `serviceAccount:${DISPATCHER}`, role: ROLE, resource: 'project' },
  { member: `serviceAccount:${DISPATCHER}`, role: 'roles/iam.serviceAccountUser', resource: `serviceAccount:${INVOKER}` },
  { member: `serviceAccount:${INVOKER}`, role: 'roles/run.invoker', resource: 'run:webhook-dispatcher' },
]
const ROLE_PERMISSIONS = { [ROLE]: ['cloudtasks.queues.create', 'cloudtasks.queues.update', 'cloudtasks.tasks.create'] }

describe("Cloud Tasks stand-in, through @google-cloud/tasks and the platform's adapter", () => {
  let issuer: OidcIssuer
  let standIn: CloudTasksStandIn
  let receiver: Server
  let target: string
  const hits: Hit[] = []
  let answers: number[] = []
  const logs: unknown[] = []
  const clients: CloudTasksClient[] = []

  beforeAll(async () => {
    issuer = await startOidcIssuer()
    receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => (body += d.toString('utf8')))
      req.on('end', () => {
        hits.push({ headers: req.headers, body, at: Date.now() })
        res.writeHead(answers.shift() ?? 200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    target = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`
    const iam = createIam(
      [
        ...DISPATCHER_GRANTS,
        // may enqueue, but not act as the invoker
        { member: `serviceAccount:${sa('portal-api')}`, role: ROLE, resource: 'project' },
      ],
      ROLE_PERMISSIONS,
    )
    standIn = createCloudTasksStandIn({
      project: PROJECT,
      issuer,
      iam,
      log: (l) => logs.push(l),
      cloudRunServiceAt: (url) => (url.startsWith(`${target}/`) ? 'webhook-dispatcher' : null),
    })
  })

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()))
    await standIn.close()
    await issuer.close()
    await new Promise((resolve) => receiver.close(resolve))
  })

  async function clientAs(account: string): Promise<CloudTasksClient> {
    const listener = await standIn.listenFor(account)
    const client = new CloudTasksClient(await standInClientOptions(`127.0.0.1:${listener.port}`))
    clients.push(client)
    return client
  }

  async function waitHits(n: number): Promise<void> {
    for (let i = 0; i < 300 && hits.length < n; i++) await sleep(100)
    expect(hits.length, JSON.stringify(logs)).toBeGreaterThanOrEqual(n)
  }

  it('creates and re-rates queues, delivers a task with the OIDC token the dispatcher verifies, retries a failure and de-duplicates names', async () => {
    const client = await clientAs(DISPATCHER)
    const scheduler = createCloudTasksScheduler(client, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${target}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: target,
    })
    await scheduler.ensureQueue('int_1', { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 2 })
    // a second process (another instance) meets ALREADY_EXISTS and updates the rate instead
    const other = createCloudTasksScheduler(client, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${target}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: target,
    })
    await other.ensureQueue('int_1', { maxDispatchesPerSecond: 7, maxConcurrentDispatches: 3 })

    answers = [500, 200]
    await scheduler.enqueue({ queue: 'int_1', name: 'delivery-1', payload: Buffer.from('{"job":1}') })
    await waitHits(2)
    const [first, retried] = hits
    expect(first!.body).toBe('{"job":1}')
    expect(first!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-delivery-queue': 'int_1',
      'x-cloudtasks-queuename': cloudTasksQueueId('int_1'),
      'x-cloudtasks-taskretrycount': '0',
    })
    expect(retried!.headers['x-cloudtasks-taskretrycount']).toBe('1')
    // the receiver plays an authenticated Cloud Run service: the token arrives as Cloud Run's front
    // end forwards it, signature stripped (mutation: forward the minted token as is → fails here)
    const token = /^Bearer (.+)$/.exec(String(first!.headers.authorization))![1]!
    expect(token.split('.')[2]).toBe('SIGNATURE_REMOVED_BY_GOOGLE')
    const behindFrontEnd = createOidcVerifier({ issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl, frontEnd: true })
    await expect(behindFrontEnd(token, { audience: target, email: INVOKER })).resolves.toBeUndefined()
    await expect(behindFrontEnd(token, { audience: target, email: sa('pubsub-push') })).rejects.toThrow(/another identity/)
    // a verifier that insists on the signature refuses what Cloud Run really hands the container
    const insisting = createOidcVerifier({ issuers: [issuer.issuer], jwksUrl: issuer.jwksUrl })
    await expect(insisting(token, { audience: target, email: INVOKER })).rejects.toThrow(/signature removed/)

    // the same name again: ignored by the adapter (ALREADY_EXISTS), refused by the API
    await scheduler.enqueue({ queue: 'int_1', name: 'delivery-1', payload: Buffer.from('{"job":1}') })
    const queuePath = `projects/${PROJECT}/locations/europe-west1/queues/${cloudTasksQueueId('int_1')}`
    await expect(
      client.createTask({
        parent: queuePath,
        task: { name: `${queuePath}/tasks/${cloudTasksTaskId('delivery-1')}`, httpRequest: { url: `${target}/x`, httpMethod: 'POST' } },
      }),
    ).rejects.toMatchObject({ code: 6 })

    // a task scheduled later is sent at its time, not before
    const at = new Date(Date.now() + 1500)
    await scheduler.enqueue({ queue: 'int_1', name: 'delivery-later', payload: Buffer.from('{"job":2}'), scheduleAt: at })
    await waitHits(3)
    expect(hits[2]!.body).toBe('{"job":2}')
    expect(hits[2]!.at).toBeGreaterThanOrEqual(at.getTime())
    expect(Number(hits[2]!.headers['x-cloudtasks-tasketa'])).toBeCloseTo(at.getTime() / 1000, 2)
  })

  it("answers Cloud Run's 403 for a task whose identity may not invoke the service, which never sees it", async () => {
    const client = await clientAs(DISPATCHER)
    const scheduler = createCloudTasksScheduler(client, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${target}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: target,
    })
    await scheduler.ensureQueue('int_5', { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 1 })
    const queuePath = `projects/${PROJECT}/locations/europe-west1/queues/${cloudTasksQueueId('int_5')}`
    const before = hits.length
    // no oidcToken: Cloud Run sees a caller without identity, and only allUsers would let it in
    await client.createTask({
      parent: queuePath,
      task: { name: `${queuePath}/tasks/anonymous`, httpRequest: { url: `${target}/tasks/deliver`, httpMethod: 'POST', body: Buffer.from('{}') } },
    })
    const refused = () => (logs as Array<{ task?: string; status?: number; error?: string }>).find((l) => l.task?.endsWith('/tasks/anonymous'))
    for (let i = 0; i < 100 && !refused(); i++) await sleep(100)
    expect(refused(), JSON.stringify(logs)).toMatchObject({ status: 403, error: expect.stringContaining('run.routes.invoke on service webhook-dispatcher') })
    expect(hits.length).toBe(before)
    // control: the invoker identity on the same queue gets through
    await scheduler.enqueue({ queue: 'int_5', name: 'delivery-5', payload: Buffer.from('{"job":5}') })
    await waitHits(before + 1)
    expect(hits.at(-1)!.body).toBe('{"job":5}')
  })

  it("refuses what infra/ does not grant: no Cloud Tasks role, no actAs on the token's account, a URL off this machine", async () => {
    const stranger = await clientAs(sa('edge-ingest'))
    const noRole = createCloudTasksScheduler(stranger, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${target}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: target,
    })
    await expect(noRole.ensureQueue('int_2', { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 })).rejects.toMatchObject({
      code: 7,
      message: expect.stringContaining('cloudtasks.queues.create'),
    })

    const portal = await clientAs(sa('portal-api'))
    const noActAs = createCloudTasksScheduler(portal, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${target}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: target,
    })
    await noActAs.ensureQueue('int_3', { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 })
    await expect(noActAs.enqueue({ queue: 'int_3', name: 'x', payload: Buffer.from('{}') })).rejects.toMatchObject({
      code: 7,
      message: expect.stringContaining('iam.serviceAccounts.actAs'),
    })

    const dispatcher = await clientAs(DISPATCHER)
    const offMachine = createCloudTasksScheduler(dispatcher, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: 'https://example.com/tasks/deliver',
      serviceAccountEmail: INVOKER,
      audience: 'https://example.com',
    })
    await offMachine.ensureQueue('int_4', { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 })
    await expect(offMachine.enqueue({ queue: 'int_4', name: 'x', payload: Buffer.from('{}') })).rejects.toMatchObject({ code: 3 })
  })
})

describe("Cloud Tasks stand-in in front of the real dispatcher: Cloud Run's signature stripping", () => {
  // the dispatcher's DISPATCHER_URL as Terraform gives it; the stand-in maps the loopback origins to its service
  const FRONT_END_SECRET = newFrontEndSecret()
  const AUDIENCE = `https://webhook-dispatcher-${randomUUID().slice(0, 8)}.europe-west1.run.app`
  let issuer: OidcIssuer
  let standIn: CloudTasksStandIn
  const logs: Array<{ task?: string; status?: number }> = []
  const apps: App[] = []
  const deps: Array<{ cleanup(): Promise<void> }> = []
  const origins = new Set<string>()
  let client: CloudTasksClient

  beforeAll(async () => {
    issuer = await startOidcIssuer()
    const iam = createIam(DISPATCHER_GRANTS, ROLE_PERMISSIONS)
    standIn = createCloudTasksStandIn({
      project: PROJECT,
      issuer,
      iam,
      log: (l) => logs.push(l as { task?: string; status?: number }),
      cloudRunServiceAt: (url) => (origins.has(new URL(url).origin) ? 'webhook-dispatcher' : null),
      frontEndSecret: FRONT_END_SECRET,
    })
    const listener = await standIn.listenFor(DISPATCHER)
    client = new CloudTasksClient(await standInClientOptions(`127.0.0.1:${listener.port}`))
  })
  afterAll(async () => {
    await client?.close()
    await standIn?.close()
    for (const app of apps) await app.close()
    for (const d of deps) await d.cleanup()
    await issuer?.close()
  })

  /** a webhook-dispatcher app on loopback, verifying its tokens against the stand-in's issuer */
  async function dispatcherWith(env: Record<string, string>): Promise<string> {
    const d = await createTestDeps({
      env: { OIDC_ISSUER: issuer.issuer, OIDC_JWKS_URL: issuer.jwksUrl, DISPATCHER_URL: AUDIENCE, TASKS_SERVICE_ACCOUNT: INVOKER, ...env },
    })
    deps.push(d)
    const app = await buildDispatcher(d)
    apps.push(app)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const origin = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    origins.add(origin)
    return origin
  }

  /** enqueues one delivery job for the dispatcher at `origin` and returns the status of its first attempt */
  async function firstAttempt(origin: string): Promise<number | undefined> {
    const queue = `int_${randomUUID().slice(0, 8)}`
    const scheduler = createCloudTasksScheduler(client, {
      project: PROJECT,
      location: 'europe-west1',
      targetUrl: `${origin}/tasks/deliver`,
      serviceAccountEmail: INVOKER,
      audience: AUDIENCE,
    })
    await scheduler.ensureQueue(queue, { maxDispatchesPerSecond: 5, maxConcurrentDispatches: 1 })
    const name = `delivery-${randomUUID().slice(0, 8)}`
    await scheduler.enqueue({ queue, name, payload: Buffer.from(JSON.stringify({ v: 1, delivery_id: 'dlv_missing', seq: 1, attempt: 1 })) })
    const id = cloudTasksTaskId(name)
    const attempt = () => logs.find((l) => l.task?.endsWith(`/tasks/${id}`) && l.status !== undefined)
    for (let i = 0; i < 100 && !attempt(); i++) await sleep(100)
    return attempt()?.status
  }

  it('a dispatcher that insists on the signature (INTERNAL_AUTH=verify) answers 401 to every task; with front-end, 200', async () => {
    // the deployed shape without this change: every /tasks/deliver would be refused on Cloud Run
    expect(await firstAttempt(await dispatcherWith({}))).toBe(401)
    // mutation: INTERNAL_AUTH ignored by the dispatcher's task route → 401 here too
    expect(await firstAttempt(await dispatcherWith({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true', LOCAL_FRONT_END_SECRET: FRONT_END_SECRET }))).toBe(200)
  })

  it("a dispatcher that expects another run's front-end secret refuses the stand-in's tasks (the secret is what it checks)", async () => {
    // mutation: the stand-in adds no X-Local-Front-End → the 200 above fails too
    expect(await firstAttempt(await dispatcherWith({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true', LOCAL_FRONT_END_SECRET: newFrontEndSecret() }))).toBe(
      401,
    )
  })
})

describe("Secret Manager stand-in, through @google-cloud/secret-manager and the platform's adapter", () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-secrets-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('reads the latest version, adds versions, and refuses what the grants do not allow', async () => {
    const store = openSecretStore(join(dir, 'secrets.json'), ['key-pepper', 'link-signing-keys', 'operator-token'])
    const iam = createIam([
      { member: `serviceAccount:${sa('portal-api')}`, role: 'roles/secretmanager.secretAccessor', resource: 'secret:key-pepper' },
      { member: `serviceAccount:${sa('portal-api')}`, role: 'roles/secretmanager.secretAccessor', resource: 'secret:link-signing-keys' },
      { member: `serviceAccount:${sa('portal-api')}`, role: 'roles/secretmanager.secretVersionAdder', resource: 'secret:link-signing-keys' },
      { member: `serviceAccount:${DISPATCHER}`, role: 'roles/secretmanager.secretAccessor', resource: 'secret:link-signing-keys' },
    ])
    const standIn = createSecretManagerStandIn({ project: PROJECT, store, iam })
    const clients: SecretManagerServiceClient[] = []
    const secretsAs = async (account: string) => {
      const l = await standIn.listenFor(account)
      const client = new SecretManagerServiceClient(await standInClientOptions(`127.0.0.1:${l.port}`))
      clients.push(client)
      return createSecretManagerSecrets(client, PROJECT, { cacheTtlMs: 0 })
    }
    try {
      const portal = await secretsAs(sa('portal-api'))
      expect(await portal.get('key-pepper')).toBe(store.version('key-pepper', 'latest')!.version.data)
      expect(JSON.parse((await portal.get('link-signing-keys'))!)).toMatchObject({ current: expect.any(String) })
      await portal.addVersion('link-signing-keys', '{"current":"k2","keys":{}}')
      expect(await portal.get('link-signing-keys')).toBe('{"current":"k2","keys":{}}')
      expect(store.version('link-signing-keys', 'latest')!.number).toBe(2)
      await expect(portal.get('operator-token')).rejects.toMatchObject({ code: 7 })

      const dispatcher = await secretsAs(DISPATCHER)
      expect(await dispatcher.get('link-signing-keys')).toBe('{"current":"k2","keys":{}}')
      await expect(dispatcher.get('key-pepper')).rejects.toMatchObject({ code: 7 })
      await expect(dispatcher.addVersion('link-signing-keys', 'x')).rejects.toMatchObject({ code: 7 })
    } finally {
      await Promise.all(clients.map((c) => c.close()))
      await standIn.close()
    }
  })
})
