/**
 * What each service uses from the outside world, in one table. loadConfig(env, service) checks
 * only what the named service needs (edge-ingest runs without DISPATCHER_URL), createPlatformDeps
 * builds only the adapters it uses, and test/deploy checks infra/service-env.tf against it.
 * Derived from the code each service's app and background reach (see test/deploy/service-needs.test.ts).
 */

export const SERVICE_NAMES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher'] as const
export type ServiceName = (typeof SERVICE_NAMES)[number]

export type Backend = 'store' | 'queue' | 'tasks' | 'secrets'

export interface ServiceNeeds {
  /** adapters the service calls; an unused one is never built (and its backend never checked) */
  backends: readonly Backend[]
  /** receives Pub/Sub push on /pubsub/*: PUSH_AUDIENCE + PUSH_SERVICE_ACCOUNT */
  pushRoutes: boolean
  /** receives Cloud Tasks on /tasks/deliver: DISPATCHER_URL (audience) + TASKS_SERVICE_ACCOUNT */
  taskRoute: boolean
  /** creates delivery tasks: DISPATCHER_URL (target and audience) + TASKS_SERVICE_ACCOUNT (identity) */
  createsTasks: boolean
  /** secrets read straight from the environment (Secret Manager → env in Cloud Run) */
  envSecrets: readonly ('KEY_PEPPER' | 'OPERATOR_TOKEN' | 'ALERT_SMTP_URL')[]
  /**
   * public origins it writes into answers (links, webhook URLs, contact `links`): required in
   * production, where the local default (localhost) would hand clients a dead address
   */
  publicOrigins: readonly ('PORTAL_BASE_URL' | 'EDGE_BASE_URL_TEMPLATE')[]
}

export const SERVICE_NEEDS: Readonly<Record<ServiceName, ServiceNeeds>> = {
  // pushes and visits: tenants and rate limits in the store, batches and visits to the queue, key hashes
  'edge-ingest': {
    backends: ['store', 'queue', 'secrets'],
    pushRoutes: false,
    taskRoute: false,
    createsTasks: false,
    envSecrets: ['KEY_PEPPER'],
    publicOrigins: [],
  },
  // management API (operator token, key hashes), link minting (link-signing-keys), delivery replay (tasks);
  // portal links and contact `links` (PORTAL_BASE_URL), edge URLs in account and connection views
  'portal-api': {
    backends: ['store', 'queue', 'tasks', 'secrets'],
    pushRoutes: false,
    taskRoute: false,
    createsTasks: true,
    envSecrets: ['KEY_PEPPER', 'OPERATOR_TOKEN', 'ALERT_SMTP_URL'],
    publicOrigins: ['PORTAL_BASE_URL', 'EDGE_BASE_URL_TEMPLATE'],
  },
  // contact batches by push; publishes change rows; reads no secret
  'upsert-worker': { backends: ['store', 'queue'], pushRoutes: true, taskRoute: false, createsTasks: false, envSecrets: [], publicOrigins: [] },
  // visit events by push, resolves link tokens (link-signing-keys), schedules and runs deliveries;
  // the Contact in visitor.identified carries `links` on PORTAL_BASE_URL
  'webhook-dispatcher': {
    backends: ['store', 'queue', 'tasks', 'secrets'],
    pushRoutes: true,
    taskRoute: true,
    createsTasks: true,
    // the SMTP relay of alert emails (an endpoint changes state)
    envSecrets: ['ALERT_SMTP_URL'],
    publicOrigins: ['PORTAL_BASE_URL'],
  },
}

/** What a process needs when it is no single service (the local stack, tools): everything. */
const ALL_NEEDS: ServiceNeeds = {
  backends: ['store', 'queue', 'tasks', 'secrets'],
  pushRoutes: true,
  taskRoute: true,
  createsTasks: true,
  envSecrets: ['KEY_PEPPER', 'OPERATOR_TOKEN', 'ALERT_SMTP_URL'],
  publicOrigins: ['PORTAL_BASE_URL', 'EDGE_BASE_URL_TEMPLATE'],
}

/** The services whose needs say yes (for the configuration table's "used by"). */
export function servicesWhere(test: (needs: ServiceNeeds) => boolean): ServiceName[] {
  return SERVICE_NAMES.filter((name) => test(SERVICE_NEEDS[name]))
}

export function needsOf(service: ServiceName | null): ServiceNeeds {
  return service === null ? ALL_NEEDS : SERVICE_NEEDS[service]
}
