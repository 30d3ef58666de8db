import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp as buildWorker } from '../../services/upsert-worker/src/app.ts'
import { buildApp as buildDispatcher } from '../../services/webhook-dispatcher/src/app.ts'
import { SERVICE_NAMES, SERVICE_NEEDS } from '@lsv/shared/config/services.ts'
import { frontEndMark, newFrontEndSecret, stripSignature } from '../../scripts/lib/cloud/front-end.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { loadTerraform } from '../infra/hcl.ts'
import { startLocalIssuer, type LocalIssuer } from './support/issuer.ts'

/**
 * Who may call the internal routes, over real HTTP on loopback with real ID tokens from a local
 * issuer, verified by the production code path (OIDC_ISSUER / OIDC_JWKS_URL only swap Google's
 * issuer and key set). Identities and audiences as infra/service-env.tf wires them.
 */
const PUSH_SA = 'pubsub-push@lsv-test.iam.gserviceaccount.com'
const TASKS_SA = 'tasks-invoker@lsv-test.iam.gserviceaccount.com'
const WORKER_URL = 'https://upsert-worker-123.europe-west1.run.app'
const DISPATCHER_URL = 'https://webhook-dispatcher-123.europe-west1.run.app'
const FRONT_END_SECRET = newFrontEndSecret()

const envelope = () =>
  JSON.stringify({
    message: { data: Buffer.from('{"not":"a batch"}').toString('base64'), attributes: {}, messageId: '42', publishTime: new Date().toISOString() },
    subscription: 'projects/lsv-test/subscriptions/some-push',
  })

type Deps = Awaited<ReturnType<typeof createTestDeps>>

async function listen(app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
}

/** The upsert worker and the dispatcher as deployed, on loopback, verifying tokens of a local issuer. */
interface InternalApps {
  issuer: LocalIssuer
  workerUrl: string
  dispatcherUrl: string
  close(): Promise<void>
}

async function startInternalApps(env: Record<string, string> = {}): Promise<InternalApps> {
  const issuer = await startLocalIssuer()
  const common = {
    OIDC_ISSUER: issuer.issuer,
    OIDC_JWKS_URL: issuer.jwksUrl,
    TASKS_SERVICE_ACCOUNT: TASKS_SA,
    DISPATCHER_URL,
    PUSH_SERVICE_ACCOUNT: PUSH_SA,
    ...env,
  }
  const deps: Deps[] = []
  const apps: App[] = []
  const close = async () => {
    for (const app of apps) await app.close()
    for (const d of deps) await d.cleanup()
    await issuer.close()
  }
  try {
    const workerDeps = await createTestDeps({ env: { ...common, PUSH_AUDIENCE: WORKER_URL } })
    deps.push(workerDeps)
    const dispatcherDeps = await createTestDeps({ env: { ...common, PUSH_AUDIENCE: DISPATCHER_URL } })
    deps.push(dispatcherDeps)
    const worker = await buildWorker(workerDeps)
    apps.push(worker)
    const dispatcher = await buildDispatcher(dispatcherDeps)
    apps.push(dispatcher)
    return { issuer, workerUrl: await listen(worker), dispatcherUrl: await listen(dispatcher), close }
  } catch (err) {
    await close()
    throw err
  }
}

describe('internal routes with identities configured (as deployed)', () => {
  let apps: InternalApps
  let issuer: LocalIssuer
  let workerUrl: string
  let dispatcherUrl: string

  beforeAll(async () => {
    apps = await startInternalApps()
    ;({ issuer, workerUrl, dispatcherUrl } = apps)
  })
  afterAll(() => apps?.close())

  const post = (url: string, token: string | null, body = envelope(), contentType = 'application/json') =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body,
    })
  const hourAgo = () => Math.floor(Date.now() / 1000) - 3600

  it('/pubsub/contact-batches: only the push identity with the worker audience gets through', async () => {
    const url = `${workerUrl}/pubsub/contact-batches`
    expect((await post(url, await issuer.token(PUSH_SA, WORKER_URL))).status).toBe(204)
    const refused = {
      'tasks identity': await issuer.token(TASKS_SA, WORKER_URL),
      'another service account': await issuer.token('intruder@lsv-test.iam.gserviceaccount.com', WORKER_URL),
      'the dispatcher audience': await issuer.token(PUSH_SA, DISPATCHER_URL),
      expired: await issuer.token(PUSH_SA, WORKER_URL, { iat: hourAgo() - 3600, exp: hourAgo() }),
      'email not verified': await issuer.token(PUSH_SA, WORKER_URL, { email_verified: false }),
      'another issuer': await issuer.token(PUSH_SA, WORKER_URL, { iss: 'https://accounts.google.com' }),
      'a key the issuer never published': await issuer.forge(PUSH_SA, WORKER_URL),
      'not a JWT': 'abc.def.ghi',
    }
    for (const [label, token] of Object.entries(refused)) {
      const res = await post(url, token)
      expect({ label, status: res.status, body: await res.json() }).toEqual({ label, status: 401, body: { ok: false, error: 'unauthorized' } })
    }
    const none = await post(url, null)
    expect(none.status).toBe(401)
    const basic = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic eDp5' }, body: envelope() })
    expect(basic.status).toBe(401)
  })

  it('/pubsub/contact-batches: a no_wrapper (bare) payload with a valid token is 400, not processed', async () => {
    const url = `${workerUrl}/pubsub/contact-batches`
    const token = await issuer.token(PUSH_SA, WORKER_URL)
    const bare = await post(url, token, '{"records":[]}')
    expect(bare.status).toBe(400)
    expect(await bare.json()).toEqual({ ok: false, error: 'invalid payload' })
    // the Pub/Sub emulator sends a no_wrapper body as application/x-www-form-urlencoded
    // (shared/findings/pubsub-emulator-push.md): the same 400
    const form = await post(url, token, '{"records":[]}', 'application/x-www-form-urlencoded')
    expect(form.status).toBe(400)
    expect(await form.json()).toEqual({ ok: false, error: 'invalid payload' })
  })

  it('/pubsub/visit-events: the push identity with the dispatcher audience, nothing else', async () => {
    const url = `${dispatcherUrl}/pubsub/visit-events`
    expect((await post(url, await issuer.token(PUSH_SA, DISPATCHER_URL))).status).toBe(204)
    expect((await post(url, await issuer.token(TASKS_SA, DISPATCHER_URL))).status).toBe(401)
    expect((await post(url, await issuer.token(PUSH_SA, WORKER_URL))).status).toBe(401)
    expect((await post(url, null)).status).toBe(401)
  })

  it('/tasks/deliver: only the tasks identity with audience DISPATCHER_URL', async () => {
    const url = `${dispatcherUrl}/tasks/deliver`
    const job = JSON.stringify({ v: 1, delivery_id: 'dlv_missing', seq: 1, attempt: 1 })
    const ok = await post(url, await issuer.token(TASKS_SA, DISPATCHER_URL), job)
    expect(ok.status).toBe(200)
    expect((await ok.json()).ok).toBe(true)
    const refused = {
      'push identity': await issuer.token(PUSH_SA, DISPATCHER_URL),
      'worker audience': await issuer.token(TASKS_SA, WORKER_URL),
      expired: await issuer.token(TASKS_SA, DISPATCHER_URL, { iat: hourAgo() - 3600, exp: hourAgo() }),
      forged: await issuer.forge(TASKS_SA, DISPATCHER_URL),
      // Google does not state that Cloud Tasks' tokens carry `email` (docs/deployed-shape.md, Cloud
      // Tasks): one without it names no identity and is refused, never taken for the tasks identity
      'no email claim': await issuer.token(TASKS_SA, DISPATCHER_URL, { email: undefined }),
      'neither email nor email_verified': await issuer.token(TASKS_SA, DISPATCHER_URL, { email: undefined, email_verified: undefined }),
    }
    for (const [label, token] of Object.entries(refused)) {
      expect({ label, status: (await post(url, token, job)).status }).toEqual({ label, status: 401 })
    }
    expect((await post(url, null, job)).status).toBe(401)
  })

  it('refuses a token whose signature was stripped, however good its claims: INTERNAL_AUTH=verify has no front end to trust', async () => {
    // what Cloud Run's front end would forward: a verifier that insists on the signature answers
    // 401 to every push and task behind it (mutation: accept stripped tokens in verify mode → 204/200)
    const job = JSON.stringify({ v: 1, delivery_id: 'dlv_missing', seq: 1, attempt: 1 })
    expect((await post(`${workerUrl}/pubsub/contact-batches`, stripSignature(await issuer.token(PUSH_SA, WORKER_URL)))).status).toBe(401)
    expect((await post(`${dispatcherUrl}/pubsub/visit-events`, stripSignature(await issuer.token(PUSH_SA, DISPATCHER_URL)))).status).toBe(401)
    expect((await post(`${dispatcherUrl}/tasks/deliver`, stripSignature(await issuer.token(TASKS_SA, DISPATCHER_URL)), job)).status).toBe(401)
  })

  it('fetches the key set once, not per request', () => {
    expect(issuer.fetches()).toBe(1)
  })
})

describe("internal routes behind Cloud Run's front end (INTERNAL_AUTH=front-end, as infra/service-env.tf sets it)", () => {
  let apps: InternalApps
  let issuer: LocalIssuer
  let workerUrl: string
  let dispatcherUrl: string
  const job = JSON.stringify({ v: 1, delivery_id: 'dlv_missing', seq: 1, attempt: 1 })

  beforeAll(async () => {
    // LOCAL_WIRING stands in for K_SERVICE: front-end is refused where no front end can be
    // and the played front end's secret: what start:cloud gives them (front-end.ts)
    apps = await startInternalApps({ INTERNAL_AUTH: 'front-end', LOCAL_WIRING: 'true', LOCAL_FRONT_END_SECRET: FRONT_END_SECRET })
    ;({ issuer, workerUrl, dispatcherUrl } = apps)
  })
  afterAll(() => apps?.close())

  /** as the played front end forwards it: with the run's secret */
  const post = (url: string, headers: Record<string, string>, body = envelope()) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...frontEndMark('upsert-worker', FRONT_END_SECRET), ...headers }, body })
  const hourAgo = () => Math.floor(Date.now() / 1000) - 3600
  const bearer = async (email: string, audience: string, claims = {}) => `Bearer ${stripSignature(await issuer.token(email, audience, claims))}`

  it('accepts the stripped token of the right identity on each route, and only that', async () => {
    // mutation: INTERNAL_AUTH not passed to the verifier (pushCallers/taskCallers) → 401 here
    expect((await post(`${workerUrl}/pubsub/contact-batches`, { authorization: await bearer(PUSH_SA, WORKER_URL) })).status).toBe(204)
    expect((await post(`${dispatcherUrl}/pubsub/visit-events`, { authorization: await bearer(PUSH_SA, DISPATCHER_URL) })).status).toBe(204)
    expect((await post(`${dispatcherUrl}/tasks/deliver`, { authorization: await bearer(TASKS_SA, DISPATCHER_URL) }, job)).status).toBe(200)
    const refused = {
      'push identity on /tasks/deliver': [`${dispatcherUrl}/tasks/deliver`, await bearer(PUSH_SA, DISPATCHER_URL), job],
      'tasks identity on /pubsub/visit-events': [`${dispatcherUrl}/pubsub/visit-events`, await bearer(TASKS_SA, DISPATCHER_URL), envelope()],
      "the worker's audience at the dispatcher": [`${dispatcherUrl}/pubsub/visit-events`, await bearer(PUSH_SA, WORKER_URL), envelope()],
      expired: [`${workerUrl}/pubsub/contact-batches`, await bearer(PUSH_SA, WORKER_URL, { iat: hourAgo() - 3600, exp: hourAgo() }), envelope()],
      'email not verified': [`${workerUrl}/pubsub/contact-batches`, await bearer(PUSH_SA, WORKER_URL, { email_verified: false }), envelope()],
      'no email claim on /tasks/deliver': [`${dispatcherUrl}/tasks/deliver`, await bearer(TASKS_SA, DISPATCHER_URL, { email: undefined }), job],
      // a signed token is still verified: one signed by a key the issuer never published is refused
      forged: [`${workerUrl}/pubsub/contact-batches`, `Bearer ${await issuer.forge(PUSH_SA, WORKER_URL)}`, envelope()],
    } as const
    for (const [label, [url, authorization, body]] of Object.entries(refused)) {
      const res = await post(url, { authorization }, body)
      expect({ label, status: res.status, body: await res.json() }).toEqual({ label, status: 401, body: { ok: false, error: 'unauthorized' } })
    }
    // an intact signed token (Cloud Run never forwards one, but it proves itself) still passes
    expect((await post(`${workerUrl}/pubsub/contact-batches`, { authorization: `Bearer ${await issuer.token(PUSH_SA, WORKER_URL)}` })).status).toBe(204)
  })

  it('reads X-Serverless-Authorization first: the header Cloud Run checked, not an Authorization it passed through', async () => {
    const url = `${dispatcherUrl}/tasks/deliver`
    // a caller holding the push identity's (checked) token puts a made-up stripped tasks token in
    // Authorization: refused (mutation: read Authorization first → 200)
    const madeUp = await bearer(TASKS_SA, DISPATCHER_URL)
    const res = await post(url, { 'x-serverless-authorization': await bearer(PUSH_SA, DISPATCHER_URL), authorization: madeUp }, job)
    expect(res.status).toBe(401)
    // the tasks identity's token in X-Serverless-Authorization passes, whatever Authorization holds
    expect((await post(url, { 'x-serverless-authorization': madeUp, authorization: 'Basic eDp5' }, job)).status).toBe(200)
    // a malformed X-Serverless-Authorization is refused, never a fall-back to Authorization
    expect((await post(url, { 'x-serverless-authorization': 'garbage', authorization: madeUp }, job)).status).toBe(401)
  })

  it('on this machine, a stripped token sent straight to the service (not through the played front end) is refused', async () => {
    // any local process can mint `header.payload.SIGNATURE_REMOVED_BY_GOOGLE`: only the relay
    // and the Cloud Tasks stand-in hold the run's secret (mutation: no X-Local-Front-End check → 204/200)
    const straight = (url: string, headers: Record<string, string>, body = envelope()) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
    const cases = {
      'no secret, contact batch': straight(`${workerUrl}/pubsub/contact-batches`, { authorization: await bearer(PUSH_SA, WORKER_URL) }),
      'no secret, visit event': straight(`${dispatcherUrl}/pubsub/visit-events`, { authorization: await bearer(PUSH_SA, DISPATCHER_URL) }),
      'no secret, task': straight(`${dispatcherUrl}/tasks/deliver`, { authorization: await bearer(TASKS_SA, DISPATCHER_URL) }, job),
      'a wrong secret': straight(`${workerUrl}/pubsub/contact-batches`, {
        authorization: await bearer(PUSH_SA, WORKER_URL),
        'x-local-front-end': newFrontEndSecret(),
      }),
      // a signed token does not open the way either: only the front end gets in
      'no secret, signed token': straight(`${workerUrl}/pubsub/contact-batches`, { authorization: `Bearer ${await issuer.token(PUSH_SA, WORKER_URL)}` }),
    }
    for (const [label, pending] of Object.entries(cases)) {
      const res = await pending
      expect({ label, status: res.status, body: await res.json() }).toEqual({ label, status: 401, body: { ok: false, error: 'unauthorized' } })
    }
    // the same requests through the front end pass
    expect((await post(`${workerUrl}/pubsub/contact-batches`, { authorization: await bearer(PUSH_SA, WORKER_URL) })).status).toBe(204)
  })

  it('infra/service-env.tf sets INTERNAL_AUTH=front-end exactly where a service has internal routes', async () => {
    // mutation: drop INTERNAL_AUTH from service-env.tf → on Cloud Run every push and task is 401
    const tf = await loadTerraform()
    const env = (Object.assign({}, ...tf.locals) as { service_env: Record<string, string> }).service_env
    for (const service of SERVICE_NAMES) {
      const internal = SERVICE_NEEDS[service].pushRoutes || SERVICE_NEEDS[service].taskRoute
      expect({ service, frontEnd: /\bINTERNAL_AUTH\s*=\s*"front-end"/.test(String(env[service])) }).toEqual({ service, frontEnd: internal })
    }
  })
})

describe('internal routes in local development (no identity configured)', () => {
  let deps: { worker: Deps; dispatcher: Deps }
  let worker: App
  let dispatcher: App

  beforeAll(async () => {
    deps = { worker: await createTestDeps(), dispatcher: await createTestDeps() }
    worker = await buildWorker(deps.worker)
    dispatcher = await buildDispatcher(deps.dispatcher)
  })
  afterAll(async () => {
    await worker?.close()
    await dispatcher?.close()
    await deps?.worker.cleanup()
    await deps?.dispatcher.cleanup()
  })

  const job = JSON.stringify({ v: 1, delivery_id: 'dlv_missing', seq: 1, attempt: 1 })
  const routes = () => [
    { app: worker, url: '/pubsub/contact-batches', body: envelope(), ok: 204 },
    { app: dispatcher, url: '/pubsub/visit-events', body: envelope(), ok: 204 },
    { app: dispatcher, url: '/tasks/deliver', body: job, ok: 200 },
  ]
  const call = (app: App, url: string, body: string, remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, payload: body, remoteAddress, headers: { 'content-type': 'application/json', ...headers } })

  it('accepts callers on loopback (127.0.0.0/8, ::1, IPv4-mapped) without a token', async () => {
    for (const { app, url, body, ok } of routes()) {
      for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
        expect({ url, address, status: (await call(app, url, body, address)).statusCode }).toEqual({ url, address, status: ok })
      }
    }
  })

  it('refuses any other socket address, whatever X-Forwarded-For or Authorization claims', async () => {
    for (const { app, url, body } of routes()) {
      for (const address of ['10.1.2.3', '192.168.0.5', '::ffff:10.0.0.1', '2001:db8::1', '169.254.1.1']) {
        const res = await call(app, url, body, address, { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', authorization: 'Bearer whatever' })
        expect({ url, address, status: res.statusCode }).toEqual({ url, address, status: 401 })
        expect(res.json()).toEqual({ ok: false, error: 'unauthorized' })
      }
    }
  })
})
