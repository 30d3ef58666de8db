import { mkdirSync } from 'node:fs'
import type { Logger } from 'pino'
import type { PlatformDeps } from '../ports/deps.ts'
import type { Clock } from '../model/clock.ts'
import { systemClock } from '../model/clock.ts'
import type { PlatformConfig } from '../config/config.ts'
import type { Queue } from '../ports/queue.ts'
import type { TaskScheduler } from '../ports/task-scheduler.ts'
import type { Secrets } from '../ports/secrets.ts'
import type { WebhookSender } from '../ports/webhook-sender.ts'
import type { EmbeddedDb, EmbeddedDbOptions } from '../adapters/embedded/db.ts'
import { webhookSenderFor } from '../adapters/outbound-http/webhook-sender.ts'
import { needsOf, type Backend } from '../config/services.ts'
import { standInClientOptions } from '../adapters/google/stand-in-client.ts'
import { skipMetadataServerForStandIns } from './metadata-detection.ts'
import { withContactWrites } from '../domain/contacts/write-seam.ts'
import { createListeners } from './listeners.ts'
import { OPERATOR_INTEGRATION_ID } from '../domain/operations/operator-ids.ts'
import { buildStores, type StoreBuild, type StoreOverrides, type Stores } from './deps-stores.ts'
import { buildQueue, buildTasks } from './deps-messaging.ts'
import { accountOfAlertTarget, alertTarget } from '../domain/alerts/target.ts'
import { createAlertMail } from '../adapters/mail/alert-mail.ts'
import type { AlertMail } from '../ports/alert-mail.ts'

/** Adapters given instead of built (tests); the stores' overrides are described in deps-stores.ts. */
export interface DepsOverrides extends StoreOverrides {
  clock?: Clock
  queue?: Queue
  tasks?: TaskScheduler
  secrets?: Secrets
  webhookSender?: WebhookSender
  alertMail?: AlertMail
}

/**
 * The adapter of a backend this service does not use (shared/src/config/services.ts): nothing is
 * built or opened for it (no embedded file in production), and a call says so instead of
 * reaching a store the deployment never gave the service. Null when the service uses `backend`
 * (or the process is every service).
 */
function unusedAdapter<T extends object>(config: PlatformConfig, backend: Backend): T | null {
  const service = config.service
  if (service === null || needsOf(service).backends.includes(backend)) return null
  return new Proxy({} as T, {
    get(_target, prop) {
      if (prop === 'close') return async () => {}
      if (prop === 'then') return undefined
      return () => {
        throw new Error(`${service} does not use the ${backend} backend (shared/src/config/services.ts), yet ${String(prop)}() was called`)
      }
    },
  })
}

/**
 * The secrets adapter the configuration selects, and how to release its client (after the
 * adapter's own close). Also what a tool that needs only secrets builds (the CLI's link signing
 * key rotation), so it opens no store.
 */
export async function createSecretsAdapter(config: PlatformConfig): Promise<{ secrets: Secrets; closeClient(): Promise<void> }> {
  // a secrets-only tool never goes through createPlatformDeps: decide the metadata switch here too,
  // before the client exists, on the whole configuration (the switch is process-wide, so it is
  // set only when every Google API the configuration names is a stand-in; a no-op when repeated)
  skipMetadataServerForStandIns(config)
  if (config.secretsBackend === 'secretmanager') {
    const { SecretManagerServiceClient } = await import('@google-cloud/secret-manager')
    const host = config.emulatorHosts.secretManager
    const client = new SecretManagerServiceClient(host ? await standInClientOptions(host) : {})
    const secrets = (await import('../adapters/google/secret-manager-secrets.ts')).createSecretManagerSecrets(client, config.gcpProject)
    return { secrets, closeClient: () => client.close() }
  }
  return { secrets: (await import('../adapters/embedded/secrets.ts')).createEmbeddedSecrets(config.dataDir), closeClient: async () => {} }
}

/**
 * Builds the adapters the configuration selects, for the backends its service uses: the stores
 * (deps-stores.ts), the queue and the task scheduler (deps-messaging.ts), the secrets, then the
 * deps over them with their listeners (platform/listeners.ts). Google Cloud client libraries are
 * imported only when selected, so the embedded default starts without them. `embeddedDb`: how the
 * embedded database is opened (the local stack's write gate between its threads, platform/serve.ts).
 */
export async function createPlatformDeps(
  config: PlatformConfig,
  logger: Logger,
  overrides: DepsOverrides = {},
  embeddedDb: EmbeddedDbOptions = {},
): Promise<PlatformDeps> {
  const clock = overrides.clock ?? systemClock
  // before any Google client exists: stand-ins need no credential lookup (metadata-detection.ts)
  skipMetadataServerForStandIns(config)
  let openedDb: EmbeddedDb | null = null
  const build: StoreBuild = {
    closers: [],
    async embedded() {
      if (!openedDb) {
        mkdirSync(config.dataDir, { recursive: true })
        const { openEmbeddedDb } = await import('../adapters/embedded/db.ts')
        openedDb = openEmbeddedDb(config.dataDir, undefined, embeddedDb)
      }
      return openedDb
    },
  }

  const stores = await buildStores(config, overrides, build)
  const queue = overrides.queue ?? unusedAdapter<Queue>(config, 'queue') ?? (await buildQueue(config, logger, clock, build))
  const tasks = overrides.tasks ?? unusedAdapter<TaskScheduler>(config, 'tasks') ?? (await buildTasks(config, logger, clock, build))
  let secrets = overrides.secrets ?? unusedAdapter<Secrets>(config, 'secrets')
  if (!secrets) {
    const built = await createSecretsAdapter(config)
    secrets = built.secrets
    build.closers.push(built.closeClient)
  }
  const adapters = {
    ...stores,
    queue,
    tasks,
    secrets,
    webhookSender: overrides.webhookSender ?? webhookSenderFor(config.allowLoopbackWebhooks),
    alertMail: overrides.alertMail ?? createAlertMail(config, { logger }),
  }
  return assembleDeps(config, logger, clock, adapters, async () => {
    for (const c of build.closers) await c().catch(() => {})
    await (openedDb as EmbeddedDb | null)?.close()
  })
}

/** the adapters PlatformDeps holds */
type Adapters = Stores & Pick<PlatformDeps, 'queue' | 'tasks' | 'secrets' | 'webhookSender' | 'alertMail'>

/**
 * The deps over the built adapters: contact writes through their one seam, one lookup of delivery
 * targets, the listeners, and a close that flushes them and closes the adapters in order, then
 * `release` (the clients and the embedded file).
 */
function assembleDeps(config: PlatformConfig, logger: Logger, clock: Clock, adapters: Adapters, release: () => Promise<void>): PlatformDeps {
  const { contacts } = adapters
  let closed = false
  const deps: PlatformDeps = {
    ...adapters,
    config,
    logger,
    clock,
    // the one seam every contact write crosses: its reactions (the change feed) run for every writer
    contacts: withContactWrites(contacts, () => deps.listeners.contactWritten),
    // one lookup for every delivery: the operator's endpoint (operational events) by its reserved
    // id, loaded when first used (it reads the signing secret: only the dispatcher delivers),
    // else the tenant's integration
    deliveryTargets: {
      async get(integrationId) {
        if (integrationId === OPERATOR_INTEGRATION_ID) return (await import('../domain/operations/target.ts')).operatorTarget(deps)
        // an account's alert webhook (domain/alerts/target.ts): its own URL and secret, on the account
        const alertAccount = accountOfAlertTarget(integrationId)
        if (alertAccount !== null) return alertTarget(deps, alertAccount)
        return deps.tenantLookups.getIntegration(integrationId)
      },
    },
    // set below, over these deps
    listeners: null as unknown as PlatformDeps['listeners'],
    async close() {
      if (closed) return
      closed = true
      // what listeners gathered in memory, while the stores are still open
      await deps.listeners.flush().catch((err: unknown) => logger.warn({ err }, 'listeners not flushed'))
      // order: stop producers/consumers first, then stores
      for (const c of [
        deps.tasks,
        deps.queue,
        deps.rateLimiter,
        deps.counters,
        deps.pushLog,
        deps.brandAssets,
        deps.contacts,
        deps.linkTokens,
        deps.tenants,
        deps.deliveries,
        deps.claims,
        deps.portalAccess,
        deps.auditLog,
        deps.alertMail,
        deps.secrets,
      ]) {
        await c.close().catch((err: unknown) => logger.warn({ err }, 'adapter close failed'))
      }
      await release()
    },
  }
  deps.listeners = createListeners(deps)
  return deps
}
