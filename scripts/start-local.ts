/**
 * `npm start`: the whole platform in one process on the embedded adapters (no server to
 * install). The four services share one PlatformDeps, so the edge's queue is the worker's queue
 * and every service sees the same stores, as in production where they share Pub/Sub and
 * Firestore. Listens on EDGE_PORT (8080), PORTAL_PORT (8081), UPSERT_WORKER_PORT (8082) and
 * WEBHOOK_DISPATCHER_PORT (8083) on 0.0.0.0, runs the pull consumers in process, creates a demo
 * tenant on first run through the management API and prints how to use it.
 *
 * Local defaults: NODE_ENV=development, ALLOW_LOOPBACK_WEBHOOKS=true; the operator token and
 * key pepper are generated once into DATA_DIR (embedded secret store) unless set.
 * SIGTERM/SIGINT drain within SHUTDOWN_GRACE_MS and exit 0.
 */
import closeWithGrace from 'close-with-grace'
import { ConfigError, edgeBaseUrlFor, loadConfig, port, type PlatformConfig } from '@lsv/shared/config/config.ts'
import { createLogger, flushLoggerSync, type Logger } from '@lsv/shared/logging/logger.ts'
import { createPlatformDeps, type PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { getOperatorToken } from '@lsv/shared/domain/secrets/platform-secrets.ts'
import { SHUTDOWN_GRACE_MS, type Background } from '@lsv/shared/platform/serve.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { buildApp as buildEdgeApp } from '../services/edge-ingest/src/app.ts'
import { buildApp as buildPortalApp } from '../services/portal-api/src/app.ts'
import { buildApp as buildUpsertWorkerApp } from '../services/upsert-worker/src/app.ts'
import { buildApp as buildDispatcherApp } from '../services/webhook-dispatcher/src/app.ts'
import { startDispatcherBackground } from '../services/webhook-dispatcher/src/background.ts'
import { upsertWorkerBackground } from '../services/upsert-worker/src/background.ts'
import { backgroundFor } from '@lsv/shared/platform/background.ts'
import { demoBanner, ensureDemoTenant, DEMO_PUBLIC_ID } from './lib/demo-tenant.ts'

type Env = Record<string, string | undefined>

/** The local defaults, under whatever the environment sets. */
function localEnv(env: Env): Env {
  const out: Env = { NODE_ENV: 'development', ...env }
  if (out.NODE_ENV !== 'production' && (out.ALLOW_LOOPBACK_WEBHOOKS === undefined || out.ALLOW_LOOPBACK_WEBHOOKS === '')) {
    out.ALLOW_LOOPBACK_WEBHOOKS = 'true'
  }
  return out
}

interface LocalService {
  name: string
  port: number
  build(deps: PlatformDeps): Promise<App>
}

function backendsOf(config: PlatformConfig): string {
  const all = [config.storeBackend, config.queueBackend, config.tasksBackend, config.secretsBackend]
  if (all.every((b) => b === 'embedded')) return 'embedded adapters'
  return `store ${config.storeBackend}, queue ${config.queueBackend}, tasks ${config.tasksBackend}, secrets ${config.secretsBackend}`
}

interface Started {
  deps: PlatformDeps | null
  /** everything started so far, closed on shutdown (also when start-up fails midway) */
  apps: App[]
  background: Background[]
}

async function shutdown(started: Started): Promise<void> {
  // stop accepting and finish in-flight requests first, then the consumers, then the stores
  await Promise.all(started.apps.map((a) => a.close()))
  for (const b of started.background.reverse()) await b.close()
  await started.deps?.close()
}

async function start(config: PlatformConfig, services: LocalService[], logger: Logger, started: Started): Promise<void> {
  const deps = await createPlatformDeps(config, logger)
  started.deps = deps
  const built = new Map<string, App>()
  for (const s of services) {
    const app = await s.build(deps)
    started.apps.push(app)
    built.set(s.name, app)
    await app.ready()
  }

  // the demo tenant exists before anything listens: once /healthz answers, the credentials file is there
  const operatorToken = await getOperatorToken(deps)
  const { credentials, created } = await ensureDemoTenant({
    portal: built.get('portal-api')!,
    dataDir: config.dataDir,
    operatorToken,
    edgeUrl: edgeBaseUrlFor(config, DEMO_PUBLIC_ID),
    portalUrl: config.portalBaseUrl,
    accountExists: async (id) => (await deps.tenants.getAccount(id)) !== null,
    accountIdOf: async (publicId) => (await deps.tenants.getAccountByPublicId(publicId))?.id ?? null,
  })

  // one process, nobody pushes to it: backgroundFor() plans the pull consumers and the task runner
  started.background.push(...(await upsertWorkerBackground(deps, backgroundFor('upsert-worker', config, 'local-stack'))))
  started.background.push(...(await startDispatcherBackground(deps, backgroundFor('webhook-dispatcher', config, 'local-stack'))))

  for (const s of services) await built.get(s.name)!.listen({ port: s.port, host: '0.0.0.0' })

  const local = (p: number) => `http://localhost:${p}`
  // the banner comes last: pino writes asynchronously, so its buffered lines are written out first
  flushLoggerSync(logger)
  process.stdout.write(demoBanner(credentials, {
    upsertWorker: local(services[2]!.port),
    dispatcher: local(services[3]!.port),
  }, created, config.dataDir, backendsOf(config)))
}

async function main(): Promise<void> {
  const env = localEnv(process.env)
  let config: PlatformConfig
  let services: LocalService[]
  try {
    config = loadConfig(env)
    services = [
      { name: 'edge-ingest', port: port(env, 'EDGE_PORT', 8080), build: buildEdgeApp },
      { name: 'portal-api', port: port(env, 'PORTAL_PORT', 8081), build: buildPortalApp },
      { name: 'upsert-worker', port: port(env, 'UPSERT_WORKER_PORT', 8082), build: buildUpsertWorkerApp },
      { name: 'webhook-dispatcher', port: port(env, 'WEBHOOK_DISPATCHER_PORT', 8083), build: buildDispatcherApp },
    ]
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`start-local: ${err.message}`)
      process.exit(78) // EX_CONFIG, as the services do
    }
    throw err
  }

  const logger = createLogger(config.logLevel, 'local-stack')
  const started: Started = { deps: null, apps: [], background: [] }
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'draining')
    await shutdown(started)
  })
  try {
    await start(config, services, logger, started)
  } catch (err) {
    // a port in use, a management API failure: say what, release what started, exit non-zero
    logger.error({ err }, 'local stack failed to start')
    console.error(`start-local: ${(err as Error).message}`)
    await shutdown(started).catch(() => {})
    process.exit(1)
  }
}

await main()
