/**
 * Platform configuration from environment variables, validated once at start-up.
 * A bad or missing variable stops the process with a message that names it (ConfigError).
 * The table in README.md lists every variable; keep them in step.
 *
 * `loadConfig(env, service)` checks what that one service needs (shared/src/config/services.ts):
 * in production (NODE_ENV=production) a backend it uses must not be embedded, and the audience
 * and identity its internal routes verify (or its tasks carry) must be set. Local-only wiring
 * (emulator hosts, a local OIDC issuer, loopback webhooks) is refused in production unless
 * LOCAL_WIRING=true, which itself is refused on Cloud Run (K_SERVICE) and only admits loopback.
 */
import { isLoopbackHost } from './loopback.ts'
import { needsOf, type Backend, type ServiceName } from './services.ts'

export type { ServiceName } from './services.ts'

export class ConfigError extends Error {
  readonly variable: string
  constructor(variable: string, problem: string) {
    super(`configuration error: ${variable} ${problem}`)
    this.name = 'ConfigError'
    this.variable = variable
  }
}

export type StoreBackend = 'embedded' | 'firestore'
export type QueueBackend = 'embedded' | 'pubsub'
export type TasksBackend = 'embedded' | 'cloudtasks'
export type SecretsBackend = 'embedded' | 'secretmanager' | 'env'

export interface PlatformConfig {
  nodeEnv: 'development' | 'production' | 'test'
  /** the service this process runs; null: several or none (the local stack, tools) */
  service: ServiceName | null
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent'
  /** folder of the embedded adapters' data (sqlite database, key files) */
  dataDir: string
  storeBackend: StoreBackend
  queueBackend: QueueBackend
  tasksBackend: TasksBackend
  secretsBackend: SecretsBackend
  gcpProject: string | null
  gcpRegion: string
  /** `edge.localhost` locally: the edge host is `<public_id>.<edgeDomain>` */
  edgeDomain: string
  /** absolute origin of portal-api, used in links and webhook URLs */
  portalBaseUrl: string
  /** absolute origin of the edge host template, e.g. `https://{public_id}.edge.example.com` */
  edgeBaseUrlTemplate: string
  /** partner CRM tokenized-URL cutover; null: not yet decided (token-less calls accepted, flagged) */
  partnerCrmTokenCutover: Date | null
  /** local development only: allow webhook deliveries to loopback receivers */
  allowLoopbackWebhooks: boolean
  /**
   * webhook-dispatcher origin: tasks target `${dispatcherUrl}/tasks/deliver` and carry it as the
   * OIDC audience, which /tasks/deliver checks. null: local (embedded tasks, loopback callers only)
   */
  dispatcherUrl: string | null
  /** the identity (email) of the OIDC token Cloud Tasks presents on /tasks/deliver */
  tasksServiceAccount: string | null
  /** the `aud` of Pub/Sub push tokens on /pubsub/*; null: local (loopback callers only) */
  pushAudience: string | null
  /** the identity (email) of Pub/Sub push tokens on /pubsub/* */
  pushServiceAccount: string | null
  /** a local OIDC issuer instead of Google's (the deployed shape on this machine); null: Google */
  oidc: { issuer: string; jwksUrl: string } | null
  /** LOCAL_WIRING=true: production settings with loopback stand-ins (never on Cloud Run) */
  localWiring: boolean
  /** host:port of local stand-ins; null: the Google API itself */
  emulatorHosts: { firestore: string | null; pubsub: string | null; cloudTasks: string | null; secretManager: string | null }
  /** operator token and key pepper may come straight from the environment (local, tests) */
  operatorToken: string | null
  keyPepper: string | null
  /** deliveries per second to one webhook endpoint (its task queue's rate) */
  webhookEndpointRate: number
  /**
   * proxies in front of the service whose X-Forwarded-For entries are believed (0: none, the
   * socket's peer is the client). Behind the load balancer and Cloud Run: 2 (docs/operations.md)
   */
  trustedProxyHops: number
}

type Env = Record<string, string | undefined>

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`)
  }
  return raw as T
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(name, `must be true or false (got "${raw}")`)
}

function url(env: Env, name: string, fallback: string | null): string | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  try {
    const u = new URL(raw.replace('{public_id}', 'x'))
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme')
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${raw}")`)
  }
  return raw.replace(/\/+$/, '')
}

/** An absolute http(s) URL kept exactly as written (an issuer is compared byte for byte). */
function exactUrl(env: Env, name: string): string | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return null
  if (url(env, name, null) === null) return null
  return raw
}

function hostPort(env: Env, name: string): string | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return null
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(raw)) throw new ConfigError(name, `must be host:port (got "${raw}")`)
  return raw
}

function str(env: Env, name: string, fallback: string | null, pattern?: RegExp): string | null {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (pattern && !pattern.test(raw)) throw new ConfigError(name, `has an invalid value "${raw}"`)
  return raw
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(name, `must be a positive number (got "${raw}")`)
  return n
}

export function port(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(name, `must be a TCP port 0..65535 (got "${raw}")`)
  return n
}

/** Variables that wire a process to local stand-ins: refused in production unless LOCAL_WIRING=true. */
export const LOCAL_WIRING_VARIABLES = [
  'FIRESTORE_EMULATOR_HOST', 'PUBSUB_EMULATOR_HOST', 'CLOUD_TASKS_EMULATOR_HOST', 'SECRET_MANAGER_EMULATOR_HOST',
  'OIDC_ISSUER', 'OIDC_JWKS_URL', 'ALLOW_LOOPBACK_WEBHOOKS',
] as const

const BACKEND_VARIABLE: Record<Backend, string> = {
  store: 'STORE_BACKEND', queue: 'QUEUE_BACKEND', tasks: 'TASKS_BACKEND', secrets: 'SECRETS_BACKEND',
}
const PRODUCTION_BACKEND: Record<Backend, string> = {
  store: 'firestore', queue: 'pubsub', tasks: 'cloudtasks', secrets: 'secretmanager',
}

/** The host of a host:port or of a URL, for the loopback check. */
function hostOf(value: string): string {
  if (/^https?:\/\//.test(value)) return new URL(value).hostname
  return value.replace(/:\d+$/, '')
}

/**
 * LOCAL_WIRING and the local-only variables. Outside production they are accepted as they are;
 * in production each needs LOCAL_WIRING=true and must point at this machine.
 */
function localWiring(env: Env, nodeEnv: PlatformConfig['nodeEnv']): boolean {
  const wiring = bool(env, 'LOCAL_WIRING', false)
  if (wiring && env.K_SERVICE) {
    throw new ConfigError('LOCAL_WIRING', `must not be set on Cloud Run (K_SERVICE is "${env.K_SERVICE}"): it is for running the deployed shape on this machine only`)
  }
  for (const name of LOCAL_WIRING_VARIABLES) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    if (name === 'ALLOW_LOOPBACK_WEBHOOKS') {
      if (nodeEnv === 'production' && !wiring && bool(env, name, false)) {
        throw new ConfigError(name, 'must not be set in production (local only; LOCAL_WIRING=true allows it on this machine)')
      }
      continue
    }
    if (nodeEnv === 'production' && !wiring) {
      throw new ConfigError(name, 'is local-only wiring and refused in production (LOCAL_WIRING=true allows loopback stand-ins on this machine)')
    }
    if (wiring) {
      let host: string
      try {
        host = hostOf(raw)
      } catch {
        throw new ConfigError(name, `has an invalid value "${raw}"`)
      }
      if (!isLoopbackHost(host)) {
        throw new ConfigError(name, `must point at a loopback address (127.0.0.0/8, localhost, [::1]) with LOCAL_WIRING=true (got "${raw}")`)
      }
    }
  }
  return wiring
}

/** Both of a pair or neither: one without the other would leave a route unverifiable. */
function pair(env: Env, a: string, b: string): void {
  const hasA = Boolean(env[a])
  const hasB = Boolean(env[b])
  if (hasA && !hasB) throw new ConfigError(b, `is required when ${a} is set`)
  if (hasB && !hasA) throw new ConfigError(a, `is required when ${b} is set`)
}

const EMAIL = /^[^@\s]+@[^@\s]+$/

/**
 * Reads and validates the configuration of `service` (null: a process that is no single service,
 * such as the local stack: it is checked for everything).
 */
export function loadConfig(env: Env = process.env, service: ServiceName | null = null): PlatformConfig {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development')
  const production = nodeEnv === 'production'
  const needs = needsOf(service)
  const wiring = localWiring(env, nodeEnv)
  const emulatorHosts = {
    firestore: hostPort(env, 'FIRESTORE_EMULATOR_HOST'),
    pubsub: hostPort(env, 'PUBSUB_EMULATOR_HOST'),
    cloudTasks: hostPort(env, 'CLOUD_TASKS_EMULATOR_HOST'),
    secretManager: hostPort(env, 'SECRET_MANAGER_EMULATOR_HOST'),
  }
  const storeBackend = oneOf(env, 'STORE_BACKEND', ['embedded', 'firestore'] as const, emulatorHosts.firestore ? 'firestore' : 'embedded')
  const queueBackend = oneOf(env, 'QUEUE_BACKEND', ['embedded', 'pubsub'] as const, emulatorHosts.pubsub ? 'pubsub' : 'embedded')
  const tasksBackend = oneOf(env, 'TASKS_BACKEND', ['embedded', 'cloudtasks'] as const, 'embedded')
  const secretsBackend = oneOf(env, 'SECRETS_BACKEND', ['embedded', 'secretmanager', 'env'] as const, 'embedded')
  const selected: Record<Backend, string> = { store: storeBackend, queue: queueBackend, tasks: tasksBackend, secrets: secretsBackend }
  if (production) {
    // the embedded adapters write to DATA_DIR: as non-root in the image that is EACCES, and in
    // any case it would be a private store per instance; say so instead of failing on the write
    for (const backend of needs.backends) {
      if (selected[backend] !== PRODUCTION_BACKEND[backend]) {
        const variable = BACKEND_VARIABLE[backend]
        const how = env[variable] ? `is "${env[variable]}"` : 'is not set (the default is embedded)'
        throw new ConfigError(variable, `${how}: the embedded adapters are for local development only; ${service ?? 'this process'} needs ${variable}=${PRODUCTION_BACKEND[backend]} in production`)
      }
    }
  }
  const gcpProject = str(env, 'GOOGLE_CLOUD_PROJECT', null, /^[a-z][a-z0-9-]{4,29}$/)
  const needsProject = needs.backends.some((b) => selected[b] === PRODUCTION_BACKEND[b])
  if (needsProject && !gcpProject) {
    throw new ConfigError('GOOGLE_CLOUD_PROJECT', 'is required when a Google Cloud backend is selected')
  }
  const edgeDomain = str(env, 'EDGE_DOMAIN', 'edge.localhost', /^[a-z0-9.-]+$/)!
  const edgePort = port(env, 'EDGE_PORT', 8080)
  const portalPort = port(env, 'PORTAL_PORT', 8081)
  const portalBaseUrl = url(env, 'PORTAL_BASE_URL', `http://localhost:${portalPort}`)!
  const edgeBaseUrlTemplate = url(env, 'EDGE_BASE_URL_TEMPLATE', `http://{public_id}.${edgeDomain}:${edgePort}`)!
  const cutoverRaw = str(env, 'PARTNERCRM_TOKEN_CUTOVER', null)
  let partnerCrmTokenCutover: Date | null = null
  if (cutoverRaw) {
    partnerCrmTokenCutover = new Date(cutoverRaw)
    if (Number.isNaN(partnerCrmTokenCutover.getTime())) {
      throw new ConfigError('PARTNERCRM_TOKEN_CUTOVER', `must be an ISO-8601 date (got "${cutoverRaw}")`)
    }
  }
  const allowLoopbackWebhooks = bool(env, 'ALLOW_LOOPBACK_WEBHOOKS', false)

  // internal routes and the tokens tasks carry
  const pushAudience = str(env, 'PUSH_AUDIENCE', null)
  const pushServiceAccount = str(env, 'PUSH_SERVICE_ACCOUNT', null, EMAIL)
  const tasksServiceAccount = str(env, 'TASKS_SERVICE_ACCOUNT', null, EMAIL)
  const dispatcherUrl = url(env, 'DISPATCHER_URL', null)
  if (production && needs.pushRoutes) {
    const why = `is required in production: ${service ?? 'this process'} verifies the OIDC token of Pub/Sub push on /pubsub/*`
    if (!pushAudience) throw new ConfigError('PUSH_AUDIENCE', why)
    if (!pushServiceAccount) throw new ConfigError('PUSH_SERVICE_ACCOUNT', why)
  }
  if (production && (needs.taskRoute || needs.createsTasks)) {
    const why = needs.taskRoute
      ? `is required in production: ${service ?? 'this process'} verifies the OIDC token of Cloud Tasks on /tasks/deliver`
      : `is required in production: ${service ?? 'this process'} creates delivery tasks that carry it`
    if (!dispatcherUrl) throw new ConfigError('DISPATCHER_URL', why)
    if (!tasksServiceAccount) throw new ConfigError('TASKS_SERVICE_ACCOUNT', why)
  }
  pair(env, 'PUSH_AUDIENCE', 'PUSH_SERVICE_ACCOUNT')
  pair(env, 'DISPATCHER_URL', 'TASKS_SERVICE_ACCOUNT')
  pair(env, 'OIDC_ISSUER', 'OIDC_JWKS_URL')
  if (tasksBackend === 'cloudtasks' && needs.backends.includes('tasks')) {
    if (!dispatcherUrl) throw new ConfigError('DISPATCHER_URL', 'is required when TASKS_BACKEND=cloudtasks')
    if (!tasksServiceAccount) throw new ConfigError('TASKS_SERVICE_ACCOUNT', 'is required when TASKS_BACKEND=cloudtasks')
  }
  const oidcIssuer = exactUrl(env, 'OIDC_ISSUER')
  const oidcJwksUrl = exactUrl(env, 'OIDC_JWKS_URL')
  const webhookEndpointRate = positiveNumber(env, 'WEBHOOK_ENDPOINT_RATE', 100)
  const hopsRaw = env.TRUSTED_PROXY_HOPS
  const trustedProxyHops = hopsRaw === undefined || hopsRaw === '' ? 0 : Number(hopsRaw)
  if (!Number.isInteger(trustedProxyHops) || trustedProxyHops < 0 || trustedProxyHops > 10) {
    throw new ConfigError('TRUSTED_PROXY_HOPS', `must be an integer 0..10 (got "${hopsRaw}")`)
  }
  if (tasksBackend === 'cloudtasks' && webhookEndpointRate > 500) {
    throw new ConfigError('WEBHOOK_ENDPOINT_RATE', 'must be at most 500 with Cloud Tasks (its per-queue maximum)')
  }
  return {
    nodeEnv,
    service,
    logLevel: oneOf(env, 'LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const, nodeEnv === 'test' ? 'silent' : 'info'),
    dataDir: str(env, 'DATA_DIR', '.data')!,
    storeBackend,
    queueBackend,
    tasksBackend,
    secretsBackend,
    gcpProject,
    gcpRegion: str(env, 'GOOGLE_CLOUD_REGION', 'europe-west1', /^[a-z]+-[a-z]+\d+$/)!,
    edgeDomain,
    portalBaseUrl,
    edgeBaseUrlTemplate,
    partnerCrmTokenCutover,
    allowLoopbackWebhooks,
    dispatcherUrl,
    tasksServiceAccount,
    pushAudience,
    pushServiceAccount,
    oidc: oidcIssuer && oidcJwksUrl ? { issuer: oidcIssuer, jwksUrl: oidcJwksUrl } : null,
    localWiring: wiring,
    emulatorHosts,
    operatorToken: str(env, 'OPERATOR_TOKEN', null),
    keyPepper: str(env, 'KEY_PEPPER', null),
    webhookEndpointRate,
    trustedProxyHops,
  }
}

/** Builds the absolute edge origin of one account from the template. */
export function edgeBaseUrlFor(config: Pick<PlatformConfig, 'edgeBaseUrlTemplate'>, publicId: string): string {
  return config.edgeBaseUrlTemplate.replace('{public_id}', publicId)
}
