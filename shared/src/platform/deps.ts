import { mkdirSync } from 'node:fs'
import type { Logger } from 'pino'
import type { PlatformDeps } from '../ports/deps.ts'
import type { Clock } from '../model/clock.ts'
import { systemClock } from '../model/clock.ts'
import type { PlatformConfig } from '../config/config.ts'
import type { ContactStore } from '../ports/contact-store.ts'
import type { TenantStore } from '../ports/tenant-store.ts'
import type { TenantConfigVersion, TenantLookups } from '../ports/tenant-lookups.ts'
import type { DeliveryLog } from '../ports/delivery-log.ts'
import type { IdempotencyClaims } from '../ports/idempotency-claims.ts'
import type { LinkTokenStore } from '../ports/link-tokens.ts'
import type { PortalAccessStore } from '../ports/portal-access.ts'
import type { AuditLogStore } from '../ports/audit-log.ts'
import type { RateLimiter } from '../ports/rate-limiter.ts'
import type { Counters } from '../ports/counters.ts'
import type { PushLog } from '../ports/push-log.ts'
import type { BrandAssets } from '../ports/brand-assets.ts'
import type { Queue } from '../ports/queue.ts'
import type { TaskScheduler } from '../ports/task-scheduler.ts'
import type { Secrets } from '../ports/secrets.ts'
import type { WebhookSender } from '../ports/webhook-sender.ts'
import type { EmbeddedDbOptions } from '../adapters/embedded/db.ts'
import type { MonotonicTimer } from '../adapters/tenant-write-settle.ts'
import { webhookSenderFor } from '../adapters/outbound-http/webhook-sender.ts'
import { redactingDeliveryLog, redactingPushLog } from '../adapters/redacting-stores.ts'
import { needsOf, type Backend } from '../config/services.ts'
import { standInClientOptions } from '../adapters/google/stand-in-client.ts'
import { skipMetadataServerForStandIns } from './metadata-detection.ts'
import { withContactWrites } from '../domain/contacts/write-seam.ts'
import { createListeners } from './listeners.ts'
import { OPERATOR_INTEGRATION_ID } from '../domain/operations/operator-ids.ts'
import { accountOfAlertTarget, alertTarget } from '../domain/alerts/target.ts'
import { createAlertMail } from '../adapters/mail/alert-mail.ts'
import type { AlertMail } from '../ports/alert-mail.ts'

export interface DepsOverrides {
  clock?: Clock
  contacts?: ContactStore
  /** a tenant store given here is used as is: no lookup cache unless tenantLookups is given too */
  tenants?: TenantStore
  tenantLookups?: TenantLookups
  /** the version the lookup cache of the built tenant store checks (tests: a stand-in) */
  tenantConfigVersion?: TenantConfigVersion
  /** the clock the built tenant store's writes wait on until they are in force everywhere (tests: a fake one) */
  tenantWriteTimer?: MonotonicTimer
  deliveries?: DeliveryLog
  claims?: IdempotencyClaims
  linkTokens?: LinkTokenStore
  portalAccess?: PortalAccessStore
  auditLog?: AuditLogStore
  rateLimiter?: RateLimiter
  counters?: Counters
  pushLog?: PushLog
  brandAssets?: BrandAssets
  queue?: Queue
  tasks?: TaskScheduler
  secrets?: Secrets
  webhookSender?: WebhookSender
  alertMail?: AlertMail
}

/**
 * The adapter of a backend this service does not use (shared/src/config/services.ts): nothing is
 * built or opened for it (no embedded file in production), and a call says so instead of
 * reaching a store the deployment never gave the service.
 */
function unused<T extends object>(backend: Backend, service: string): T {
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
 * Builds the adapters the configuration selects, for the backends its service uses. Google Cloud
 * client libraries are imported only when selected, so the embedded default starts without them.
 * `embeddedDb`: how the embedded database is opened (the local stack's write gate between its
 * threads, platform/serve.ts).
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
  const needs = needsOf(config.service)
  /** the service that does not use `backend` (never a process that is every service) */
  const nonUser = (backend: Backend) => (config.service !== null && !needs.backends.includes(backend) ? config.service : null)
  const closers: Array<() => Promise<void>> = []
  let openedDb: import('../adapters/embedded/db.ts').EmbeddedDb | null = null
  const embedded = async () => {
    if (!openedDb) {
      mkdirSync(config.dataDir, { recursive: true })
      const { openEmbeddedDb } = await import('../adapters/embedded/db.ts')
      openedDb = openEmbeddedDb(config.dataDir, undefined, embeddedDb)
    }
    return openedDb
  }

  let contacts = overrides.contacts
  let tenants = overrides.tenants
  let tenantLookups = overrides.tenantLookups ?? overrides.tenants
  let tenantVersion = overrides.tenantConfigVersion
  let deliveries = overrides.deliveries
  let claims = overrides.claims
  let linkTokens = overrides.linkTokens
  let portalAccess = overrides.portalAccess
  let auditLog = overrides.auditLog
  let rateLimiter = overrides.rateLimiter
  let counters = overrides.counters
  let pushLog = overrides.pushLog
  let brandAssets = overrides.brandAssets
  if (config.storeBackend === 'firestore') {
    const { Firestore } = await import('@google-cloud/firestore')
    const fs = new Firestore({ projectId: config.gcpProject, ignoreUndefinedProperties: true })
    closers.push(() => fs.terminate())
    contacts ??= (await import('../adapters/google/firestore-contact-store.ts')).createFirestoreContactStore(fs)
    if (!tenants) {
      tenants = (await import('../adapters/google/firestore-tenant-store.ts')).createFirestoreTenantStore(fs)
      tenantVersion ??= (await import('../adapters/google/firestore-tenant-config-version.ts')).createFirestoreTenantConfigVersion(fs)
    }
    deliveries ??= (await import('../adapters/google/firestore-delivery-log.ts')).createFirestoreDeliveryLog(fs)
    claims ??= (await import('../adapters/google/firestore-idempotency-claims.ts')).createFirestoreIdempotencyClaims(fs)
    linkTokens ??= (await import('../adapters/google/firestore-link-tokens.ts')).createFirestoreLinkTokens(fs)
    portalAccess ??= (await import('../adapters/google/firestore-portal-access.ts')).createFirestorePortalAccessStore(fs)
    auditLog ??= (await import('../adapters/google/firestore-audit-log.ts')).createFirestoreAuditLogStore(fs)
    rateLimiter ??= (await import('../adapters/google/firestore-rate-limiter.ts')).createFirestoreRateLimiter(fs)
    counters ??= (await import('../adapters/google/firestore-counters.ts')).createFirestoreCounters(fs)
    pushLog ??= (await import('../adapters/google/firestore-push-log.ts')).createFirestorePushLog(fs)
    brandAssets ??= (await import('../adapters/google/firestore-brand-assets.ts')).createFirestoreBrandAssets(fs)
  } else {
    const db = await embedded()
    contacts ??= (await import('../adapters/embedded/contact-store.ts')).createEmbeddedContactStore(db)
    if (!tenants) {
      tenants = (await import('../adapters/embedded/tenant-store.ts')).createEmbeddedTenantStore(db)
      tenantVersion ??= (await import('../adapters/embedded/tenant-config-version.ts')).createEmbeddedTenantConfigVersion(db)
    }
    deliveries ??= (await import('../adapters/embedded/delivery-log.ts')).createEmbeddedDeliveryLog(db)
    claims ??= (await import('../adapters/embedded/idempotency-claims.ts')).createEmbeddedIdempotencyClaims(db)
    linkTokens ??= (await import('../adapters/embedded/link-tokens.ts')).createEmbeddedLinkTokens(db)
    portalAccess ??= (await import('../adapters/embedded/portal-access.ts')).createEmbeddedPortalAccessStore(db)
    auditLog ??= (await import('../adapters/embedded/audit-log.ts')).createEmbeddedAuditLogStore(db)
    rateLimiter ??= (await import('../adapters/embedded/rate-limiter.ts')).createEmbeddedRateLimiter(db)
    counters ??= (await import('../adapters/embedded/counters.ts')).createEmbeddedCounters(db)
    pushLog ??= (await import('../adapters/embedded/push-log.ts')).createEmbeddedPushLog(db)
    brandAssets ??= (await import('../adapters/embedded/brand-assets.ts')).createEmbeddedBrandAssets(db)
  }

  // the debuggers' sinks: whatever store was chosen, its writes pass the redaction policy
  pushLog = redactingPushLog(pushLog)
  deliveries = redactingDeliveryLog(deliveries)

  if (!tenantLookups) {
    // the built store: lookups cached, its writes clearing the cache (tenantVersion is set with it)
    const cache = (await import('../adapters/tenant-lookup-cache.ts')).createTenantLookupCache(tenants, tenantVersion!)
    // every instance's cache may answer from memory for the version's bound: a write that can change
    // a cached answer returns only once that has passed, so it is in force everywhere when it returns
    const { settleTenantWrites, realTimer } = await import('../adapters/tenant-write-settle.ts')
    tenants = settleTenantWrites(cache.tenants, tenantVersion!.boundMs, overrides.tenantWriteTimer ?? realTimer)
    tenantLookups = cache.lookups
  }

  let queue = overrides.queue
  const queueNonUser = nonUser('queue')
  if (!queue && queueNonUser) queue = unused('queue', queueNonUser)
  if (!queue) {
    if (config.queueBackend === 'pubsub') {
      const { PubSub } = await import('@google-cloud/pubsub')
      // its own spans (publish, and `googclient_traceparent` on each message: logging/trace-propagation.ts)
      const pubsub = new PubSub({ projectId: config.gcpProject, enableOpenTelemetryTracing: true })
      queue = (await import('../adapters/google/pubsub-queue.ts')).createPubSubQueue(pubsub, {
        logger,
        // the emulator starts empty; in Google Cloud, Terraform owns topics and subscriptions, and
        // so it does in the deployed shape on this machine (LOCAL_WIRING: start:cloud creates them
        // from infra/): a publisher must not add pull subscriptions nobody reads
        createMissing: config.emulatorHosts.pubsub !== null && !config.localWiring,
        ...(config.pubsubNamePrefix ? { namePrefix: config.pubsubNamePrefix } : {}),
      })
    } else {
      queue = (await import('../adapters/embedded/queue.ts')).createEmbeddedQueue(await embedded(), { clock, logger })
    }
  }

  let tasks = overrides.tasks
  const tasksNonUser = nonUser('tasks')
  if (!tasks && tasksNonUser) tasks = unused('tasks', tasksNonUser)
  if (!tasks) {
    if (config.tasksBackend === 'cloudtasks') {
      const { CloudTasksClient } = await import('@google-cloud/tasks')
      const host = config.emulatorHosts.cloudTasks
      const client = new CloudTasksClient(host ? await standInClientOptions(host) : {})
      closers.push(() => client.close())
      // every task, whoever creates it (dispatcher, portal-api's replay), calls the dispatcher's
      // task route with the identity and audience that route checks (taskCallers)
      tasks = (await import('../adapters/google/cloud-tasks-scheduler.ts')).createCloudTasksScheduler(client, {
        project: config.gcpProject,
        location: config.gcpRegion,
        targetUrl: `${config.dispatcherUrl}/tasks/deliver`,
        serviceAccountEmail: config.tasksServiceAccount,
        audience: config.dispatcherUrl,
      })
    } else {
      tasks = (await import('../adapters/embedded/task-scheduler.ts')).createEmbeddedTaskScheduler(await embedded(), { clock, logger })
    }
  }

  let secrets = overrides.secrets
  const secretsNonUser = nonUser('secrets')
  if (!secrets && secretsNonUser) secrets = unused('secrets', secretsNonUser)
  if (!secrets) {
    const built = await createSecretsAdapter(config)
    secrets = built.secrets
    closers.push(built.closeClient)
  }

  let closed = false
  const deps: PlatformDeps = {
    config,
    logger,
    clock,
    // the one seam every contact write crosses: its reactions (the change feed) run for every writer
    contacts: withContactWrites(contacts, () => deps.listeners.contactWritten),
    tenants,
    tenantLookups,
    deliveries,
    claims,
    linkTokens,
    portalAccess,
    auditLog,
    rateLimiter,
    counters,
    pushLog,
    brandAssets,
    queue,
    tasks,
    secrets,
    webhookSender: overrides.webhookSender ?? webhookSenderFor(config.allowLoopbackWebhooks),
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
    alertMail: overrides.alertMail ?? createAlertMail(config, { logger }),
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
      for (const c of closers) await c().catch(() => {})
      const db = openedDb as import('../adapters/embedded/db.ts').EmbeddedDb | null
      await db?.close()
    },
  }
  deps.listeners = createListeners(deps)
  return deps
}
