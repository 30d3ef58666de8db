/**
 * `npm run start:cloud`: the platform in the shape Terraform deploys it, on this machine. The
 * four services run as four processes (the command each image runs) with exactly the environment
 * infra/service-env.tf gives each (read by code, Cloud Run URLs translated to local addresses),
 * on the Firestore and Pub/Sub emulators, with topics and subscriptions as infra/ declares them
 * (push through a relay that adds the OIDC token Pub/Sub would), Cloud Tasks and Secret Manager
 * played by local stand-ins that enforce infra/'s IAM grants (Cloud Run's invoker check
 * included: a push or task without a run.invoker grant on its service gets a 403), and ID tokens
 * from a local issuer that the services verify with their production code. Then it creates the demo tenant and prints
 * the same banner and curl lines as `npm start`, on the same default ports.
 *
 * Environment: EDGE_PORT (8080), PORTAL_PORT (8081), UPSERT_WORKER_PORT (8082),
 * WEBHOOK_DISPATCHER_PORT (8083), EDGE_DOMAIN, EDGE_BASE_URL_TEMPLATE, PORTAL_BASE_URL,
 * OPERATOR_TOKEN, LISTEN_HOST (127.0.0.1: this machine only), GOOGLE_CLOUD_PROJECT (demo-lsv-local), FIRESTORE_EMULATOR_HOST and
 * PUBSUB_EMULATOR_HOST (running emulators; otherwise started here), CLOUD_DATA_DIR (.data-cloud:
 * secrets, demo credentials, logs/), INFRA_DIR (infra/).
 * Ctrl-C / SIGTERM stops everything it started, by pid, and exits 0; a start-up failure names
 * the service and the reason and exits 1. A service that exits after it was ready gets a new
 * instance, as on Cloud Run (a line on stderr and in its log says so), with a growing wait while
 * new instances fail to get ready; one that crashes more than CRASH_LOOP allows stays down, said
 * with the reason, and the rest runs on (the emulators hold the data in memory). An emulator that
 * dies is said, once; the services' /readyz then answer 503.
 */
import { resolve, join } from 'node:path'
import { ConfigError, port } from '@lsv/shared/config/config.ts'
import { demoBanner, ensureDemoTenant, DEMO_PUBLIC_ID, type ManagementApi } from './lib/demo-tenant.ts'
import { startCloudPlatform, type CloudPlatform } from './lib/cloud/platform.ts'
import { openListenWarning } from './lib/open-listen-warning.ts'

const ROOT = resolve(import.meta.dirname, '..')
const env = process.env
const say = (line: string) => process.stderr.write(`start:cloud: ${line}\n`)

let ports: { 'edge-ingest': number; 'portal-api': number; 'upsert-worker': number; 'webhook-dispatcher': number }
try {
  ports = {
    'edge-ingest': port(env, 'EDGE_PORT', 8080),
    'portal-api': port(env, 'PORTAL_PORT', 8081),
    'upsert-worker': port(env, 'UPSERT_WORKER_PORT', 8082),
    'webhook-dispatcher': port(env, 'WEBHOOK_DISPATCHER_PORT', 8083),
  }
} catch (err) {
  if (err instanceof ConfigError) {
    say(err.message)
    process.exit(78)
  }
  throw err
}
const edgeDomain = env.EDGE_DOMAIN || 'edge.localhost'
const portalBaseUrl = (env.PORTAL_BASE_URL || `http://localhost:${ports['portal-api']}`).replace(/\/+$/, '')
const edgeBaseUrlTemplate = env.EDGE_BASE_URL_TEMPLATE || `http://{public_id}.${edgeDomain}:${ports['edge-ingest']}`
const dataDir = resolve(env.CLOUD_DATA_DIR || join(ROOT, '.data-cloud'))
const portal = `http://127.0.0.1:${ports['portal-api']}`

/** The management API over HTTP, shaped like fastify's inject (what ensureDemoTenant calls). */
const managementApi: ManagementApi = {
  async inject({ method, url, headers, payload }) {
    const res = await fetch(`${portal}${url}`, {
      method,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    })
    const text = await res.text()
    return { statusCode: res.status, json: () => JSON.parse(text) as unknown }
  },
}

async function accountIdOf(publicId: string, operatorToken: string): Promise<string | null> {
  let after: string | undefined
  for (;;) {
    const res = await fetch(`${portal}/api/v1/admin/accounts?limit=200${after ? `&after=${encodeURIComponent(after)}` : ''}`, {
      headers: { authorization: `Bearer ${operatorToken}` },
    })
    if (res.status !== 200) throw new Error(`GET /api/v1/admin/accounts answered ${res.status}`)
    const page = (await res.json()) as { data?: Array<{ id: string; public_id: string }>; next_after?: string | null }
    const found = page.data?.find((a) => a.public_id === publicId)
    if (found) return found.id
    if (!page.next_after) return null
    after = page.next_after
  }
}

let platform: CloudPlatform | null = null
let stopping = false
/** a signal while starting aborts the start, which stops what it started before it rejects */
const aborter = new AbortController()
async function stop(code: number): Promise<void> {
  if (stopping) return
  stopping = true
  if (!platform) {
    aborter.abort()
    return // the start rejects once it has stopped everything; the catch below exits
  }
  await platform.close().catch((err: unknown) => say(`stopping: ${(err as Error).message}`))
  process.exit(code)
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    say(`${signal}: stopping`)
    void stop(0)
  })
}

try {
  platform = await startCloudPlatform({
    root: ROOT,
    infraDir: resolve(env.INFRA_DIR || join(ROOT, 'infra')),
    dataDir,
    project: env.GOOGLE_CLOUD_PROJECT || 'demo-lsv-local',
    ports,
    edgeDomain,
    edgeBaseUrlTemplate,
    portalBaseUrl,
    operatorToken: env.OPERATOR_TOKEN || null,
    operatorEventsUrl: env.OPERATOR_EVENTS_URL || null,
    firestoreHost: env.FIRESTORE_EMULATOR_HOST || null,
    pubsubHost: env.PUBSUB_EMULATOR_HOST || null,
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || null,
    listenHost: env.LISTEN_HOST || null,
    say,
    abort: aborter.signal,
  })
  const { shape, store } = platform
  // the operator token portal-api was given (its OPERATOR_TOKEN secret variable, else the secret)
  const portalShape = shape.services.find((s) => s.name === 'portal-api')!
  const operatorToken = store.version(portalShape.secretEnv.OPERATOR_TOKEN ?? 'operator-token', 'latest')!.version.data
  const { credentials, created } = await ensureDemoTenant({
    portal: managementApi,
    dataDir,
    operatorToken,
    edgeUrl: edgeBaseUrlTemplate.replace('{public_id}', DEMO_PUBLIC_ID),
    portalUrl: portalBaseUrl,
    accountExists: async (id) =>
      (await fetch(`${portal}/api/v1/admin/accounts/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${operatorToken}` } })).status === 200,
    accountIdOf: (publicId) => accountIdOf(publicId, operatorToken),
  })
  const local = (p: number) => `http://localhost:${p}`
  const what =
    `deployed shape: 4 service processes, Firestore and Pub/Sub emulators ${platform.emulators.firestore} ${platform.emulators.pubsub}, ` +
    `Pub/Sub push with OIDC, Cloud Tasks and Secret Manager stand-ins; logs in ${platform.logDir}`
  process.stdout.write(
    demoBanner(credentials, { upsertWorker: local(ports['upsert-worker']), dispatcher: local(ports['webhook-dispatcher']) }, created, dataDir, what),
  )
  // the services listen where LISTEN_HOST says (127.0.0.1 unset): said last, under the banner
  const warning = openListenWarning(env.LISTEN_HOST || '127.0.0.1')
  if (warning) process.stderr.write(warning)
  // runs until a signal: a crash loop or a dead emulator is said (platform.ts), never a reason to
  // stop the emulators, whose data lives in memory
} catch (err) {
  if (stopping) {
    // stopped by a signal: while starting, everything is already stopped; else stop() exits when done
    if (!platform) process.exit(0)
    await new Promise(() => {})
  }
  say(`failed to start: ${(err as Error).message}`)
  await stop(1)
  process.exit(1)
}
