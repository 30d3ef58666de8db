/**
 * Platform configuration from environment variables, validated once at start-up.
 * A bad or missing variable stops the process with a message that names it (ConfigError).
 * The table in README.md lists every variable; keep them in step.
 */

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
  /** webhook-dispatcher URL Cloud Tasks calls (production) */
  dispatcherUrl: string | null
  /** service account whose OIDC token Cloud Tasks / Pub/Sub push present */
  tasksServiceAccount: string | null
  /** expected OIDC audience of push requests (Pub/Sub, Cloud Tasks); null disables the check (local) */
  pushAudience: string | null
  /** operator token and key pepper may come straight from the environment (local, tests) */
  operatorToken: string | null
  keyPepper: string | null
  /** deliveries per second to one webhook endpoint (its task queue's rate) */
  webhookEndpointRate: number
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

export function loadConfig(env: Env = process.env): PlatformConfig {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development')
  const firestoreEmulator = Boolean(env.FIRESTORE_EMULATOR_HOST)
  const pubsubEmulator = Boolean(env.PUBSUB_EMULATOR_HOST)
  const storeBackend = oneOf(env, 'STORE_BACKEND', ['embedded', 'firestore'] as const, firestoreEmulator ? 'firestore' : 'embedded')
  const queueBackend = oneOf(env, 'QUEUE_BACKEND', ['embedded', 'pubsub'] as const, pubsubEmulator ? 'pubsub' : 'embedded')
  const tasksBackend = oneOf(env, 'TASKS_BACKEND', ['embedded', 'cloudtasks'] as const, 'embedded')
  const secretsBackend = oneOf(env, 'SECRETS_BACKEND', ['embedded', 'secretmanager', 'env'] as const, 'embedded')
  const gcpProject = str(env, 'GOOGLE_CLOUD_PROJECT', null, /^[a-z][a-z0-9-]{4,29}$/)
  const needsProject = storeBackend === 'firestore' || queueBackend === 'pubsub' || tasksBackend === 'cloudtasks' || secretsBackend === 'secretmanager'
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
  if (allowLoopbackWebhooks && nodeEnv === 'production') {
    throw new ConfigError('ALLOW_LOOPBACK_WEBHOOKS', 'must not be set in production')
  }
  const tasksServiceAccount = str(env, 'TASKS_SERVICE_ACCOUNT', null)
  const dispatcherUrl = url(env, 'DISPATCHER_URL', null)
  if (tasksBackend === 'cloudtasks') {
    if (!dispatcherUrl) throw new ConfigError('DISPATCHER_URL', 'is required when TASKS_BACKEND=cloudtasks')
    if (!tasksServiceAccount) throw new ConfigError('TASKS_SERVICE_ACCOUNT', 'is required when TASKS_BACKEND=cloudtasks')
  }
  const webhookEndpointRate = positiveNumber(env, 'WEBHOOK_ENDPOINT_RATE', 100)
  if (tasksBackend === 'cloudtasks' && webhookEndpointRate > 500) {
    throw new ConfigError('WEBHOOK_ENDPOINT_RATE', 'must be at most 500 with Cloud Tasks (its per-queue maximum)')
  }
  return {
    nodeEnv,
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
    pushAudience: str(env, 'PUSH_AUDIENCE', null),
    operatorToken: str(env, 'OPERATOR_TOKEN', null),
    keyPepper: str(env, 'KEY_PEPPER', null),
    webhookEndpointRate,
  }
}

/** Builds the absolute edge origin of one account from the template. */
export function edgeBaseUrlFor(config: Pick<PlatformConfig, 'edgeBaseUrlTemplate'>, publicId: string): string {
  return config.edgeBaseUrlTemplate.replace('{public_id}', publicId)
}
