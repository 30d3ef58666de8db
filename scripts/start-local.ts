/**
 * `npm start`: the whole platform in one process on the embedded adapters (no server to
 * install). The four services share one PlatformDeps, so the edge's queue is the worker's queue
 * and every service sees the same stores, as in production where they share Pub/Sub and
 * Firestore. Listens on EDGE_PORT (8080), PORTAL_PORT (8081), UPSERT_WORKER_PORT (8082) and
 * WEBHOOK_DISPATCHER_PORT (8083) on 127.0.0.1 (LISTEN_HOST=0.0.0.0 opens it to the network:
 * serve.ts listenHostOf), runs the pull consumers in process, creates a demo
 * tenant on first run through the management API and prints how to use it.
 *
 * Local defaults: NODE_ENV=development, ALLOW_LOOPBACK_WEBHOOKS=true; the operator token and
 * key pepper are generated once into DATA_DIR (embedded secret store) unless set.
 * SIGTERM/SIGINT drain within SHUTDOWN_GRACE_MS and exit 0.
 */
import { edgeBaseUrlFor, type PlatformConfig } from '@lsv/shared/config/config.ts'
import { flushLoggerSync } from '@lsv/shared/logging/logger.ts'
import { getOperatorToken } from '@lsv/shared/domain/secrets/platform-secrets.ts'
import { runServices, type RunningServices } from '@lsv/shared/platform/serve.ts'
import { edgeIngest } from '../services/edge-ingest/src/service.ts'
import { portalApi } from '../services/portal-api/src/service.ts'
import { upsertWorker } from '../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../services/webhook-dispatcher/src/service.ts'
import { demoBanner, ensureDemoTenant, DEMO_PUBLIC_ID, type DemoCredentials } from './lib/demo-tenant.ts'
import { openListenWarning } from './lib/open-listen-warning.ts'

type Env = Record<string, string | undefined>

/** The local defaults, under whatever the environment sets. */
function localEnv(env: Env): Env {
  const out: Env = { NODE_ENV: 'development', ...env }
  if (out.NODE_ENV !== 'production' && (out.ALLOW_LOOPBACK_WEBHOOKS === undefined || out.ALLOW_LOOPBACK_WEBHOOKS === '')) {
    out.ALLOW_LOOPBACK_WEBHOOKS = 'true'
  }
  return out
}

function backendsOf(config: PlatformConfig): string {
  const all = [config.storeBackend, config.queueBackend, config.tasksBackend, config.secretsBackend]
  if (all.every((b) => b === 'embedded')) return 'embedded adapters'
  return `store ${config.storeBackend}, queue ${config.queueBackend}, tasks ${config.tasksBackend}, secrets ${config.secretsBackend}`
}

let demo: { credentials: DemoCredentials; created: boolean } | null = null

/** the demo tenant exists before anything listens: once /healthz answers, the credentials file is there */
async function createDemoTenant({ config, deps, apps }: RunningServices): Promise<void> {
  const operatorToken = await getOperatorToken(deps)
  demo = await ensureDemoTenant({
    portal: apps.get('portal-api')!,
    dataDir: config.dataDir,
    operatorToken,
    edgeUrl: edgeBaseUrlFor(config, DEMO_PUBLIC_ID),
    portalUrl: config.portalBaseUrl,
    accountExists: async (id) => (await deps.tenants.getAccount(id)) !== null,
    accountIdOf: async (publicId) => (await deps.tenants.getAccountByPublicId(publicId))?.id ?? null,
  })
}

function printBanner({ config, logger, ports, listenHost }: RunningServices): void {
  const local = (p: number) => `http://localhost:${p}`
  // the banner comes last: pino writes asynchronously, so its buffered lines are written out first
  flushLoggerSync(logger)
  process.stdout.write(
    demoBanner(
      demo!.credentials,
      {
        upsertWorker: local(ports.get('upsert-worker')!),
        dispatcher: local(ports.get('webhook-dispatcher')!),
      },
      demo!.created,
      config.dataDir,
      backendsOf(config),
    ),
  )
  // after the banner, so it is the last thing on the screen
  const warning = openListenWarning(listenHost)
  if (warning) process.stderr.write(warning)
}

// the composition root every service process uses, with every service in this one process
await runServices([edgeIngest, portalApi, upsertWorker, webhookDispatcher], {
  host: 'local-stack',
  name: 'local-stack',
  env: localEnv(process.env),
  beforeListen: createDemoTenant,
  afterListen: printBanner,
})
