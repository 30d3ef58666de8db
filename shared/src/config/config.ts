/**
 * Platform configuration, validated once at start-up. A bad or missing variable stops the
 * process with a message that names it (ConfigError).
 *
 * Two steps. readEnvironment() checks each variable against the schema in environment.ts (its
 * form, its default). loadConfig(env, service) then applies the rules between variables for
 * what that one service needs (services.ts): in production (NODE_ENV=production) a backend it
 * uses must not be embedded, and the audience and identity its internal routes verify (or its
 * tasks carry) and the public origins it hands out must be set. Local-only wiring (emulator
 * hosts, a local OIDC issuer, loopback webhooks) is refused in production unless
 * LOCAL_WIRING=true, which itself is refused on Cloud Run (K_SERVICE) and only admits loopback.
 *
 * What a rule proves is in the type: PlatformConfig is a union on the backends, so code that
 * has checked `config.tasksBackend === 'cloudtasks'` holds a `gcpProject`, `dispatcherUrl` and
 * `tasksServiceAccount` that are strings, not `string | null`.
 */
import { ConfigError } from './config-error.ts'
import { LOCAL_WIRING_VARIABLES, readEnvironment, readPort, type Environment, type PortVariable } from './environment.ts'
import { isLoopbackHost } from './loopback.ts'
import { needsOf, type Backend, type ServiceName } from './services.ts'

export { ConfigError } from './config-error.ts'
export { LOCAL_WIRING_VARIABLES } from './environment.ts'
export type { ServiceName } from './services.ts'

/** A variable's type once set (the schema's decoded type without "unset"). */
type Value<K extends keyof Environment> = NonNullable<Environment[K]>

/** Everything but the backend selection and what the selection proves. */
export interface BaseConfig {
  nodeEnv: Value<'NODE_ENV'>
  /** the service this process runs; null: several or none (the local stack, tools) */
  service: ServiceName | null
  logLevel: Value<'LOG_LEVEL'>
  /** folder of the embedded adapters' data (sqlite database, key files) */
  dataDir: Value<'DATA_DIR'>
  /** null unless set; a string wherever a Google backend is selected (the selections below) */
  gcpProject: Value<'GOOGLE_CLOUD_PROJECT'> | null
  gcpRegion: Value<'GOOGLE_CLOUD_REGION'>
  /** `edge.localhost` locally: the edge host is `<public_id>.<edgeDomain>` */
  edgeDomain: Value<'EDGE_DOMAIN'>
  /** absolute origin of portal-api, used in links and webhook URLs */
  portalBaseUrl: Value<'PORTAL_BASE_URL'>
  /** absolute origin of the edge host template, e.g. `https://{public_id}.edge.example.com` */
  edgeBaseUrlTemplate: Value<'EDGE_BASE_URL_TEMPLATE'>
  /** partner CRM tokenized-URL cutover; null: not yet decided (token-less calls accepted, flagged) */
  partnerCrmTokenCutover: Value<'PARTNERCRM_TOKEN_CUTOVER'> | null
  /** local development only: allow webhook deliveries to loopback receivers */
  allowLoopbackWebhooks: Value<'ALLOW_LOOPBACK_WEBHOOKS'>
  /**
   * webhook-dispatcher origin: tasks target `${dispatcherUrl}/tasks/deliver` and carry it as the
   * OIDC audience, which /tasks/deliver checks. null: local (embedded tasks, loopback callers only)
   */
  dispatcherUrl: Value<'DISPATCHER_URL'> | null
  /** the identity (email) of the OIDC token Cloud Tasks presents on /tasks/deliver */
  tasksServiceAccount: Value<'TASKS_SERVICE_ACCOUNT'> | null
  /** the `aud` of Pub/Sub push tokens on /pubsub/*; null: local (loopback callers only) */
  pushAudience: Value<'PUSH_AUDIENCE'> | null
  /** the identity (email) of Pub/Sub push tokens on /pubsub/* */
  pushServiceAccount: Value<'PUSH_SERVICE_ACCOUNT'> | null
  /** a local OIDC issuer instead of Google's (the deployed shape on this machine); null: Google */
  oidc: { issuer: Value<'OIDC_ISSUER'>; jwksUrl: Value<'OIDC_JWKS_URL'> } | null
  /**
   * `front-end`: Cloud Run's front end has checked the internal routes' tokens and stripped their
   * signature (accepted on their claims); `verify`: this service checks every signature itself
   */
  internalAuth: Value<'INTERNAL_AUTH'>
  /** what start:cloud's played front end adds in X-Local-Front-End, required on the internal routes in front-end mode (null: nothing required; refused in production without LOCAL_WIRING) */
  localFrontEndSecret: Value<'LOCAL_FRONT_END_SECRET'> | null
  /** LOCAL_WIRING=true: production settings with loopback stand-ins (never on Cloud Run) */
  localWiring: Value<'LOCAL_WIRING'>
  /** host:port of local stand-ins; null: the Google API itself */
  emulatorHosts: {
    firestore: Value<'FIRESTORE_EMULATOR_HOST'> | null
    pubsub: Value<'PUBSUB_EMULATOR_HOST'> | null
    cloudTasks: Value<'CLOUD_TASKS_EMULATOR_HOST'> | null
    secretManager: Value<'SECRET_MANAGER_EMULATOR_HOST'> | null
  }
  /** prefix of topic and subscription names (tests sharing one emulator); null: none */
  pubsubNamePrefix: Value<'PUBSUB_NAME_PREFIX'> | null
  /** operator token and key pepper may come straight from the environment (Cloud Run, tests) */
  operatorToken: Value<'OPERATOR_TOKEN'> | null
  keyPepper: Value<'KEY_PEPPER'> | null
  /** where operational events are POSTed (domain/operations/); null: they are logged only */
  operatorEventsUrl: Value<'OPERATOR_EVENTS_URL'> | null
  /** the signing secret of operational events; null: from the secrets backend */
  operatorEventsSecret: Value<'OPERATOR_EVENTS_SECRET'> | null
  /**
   * the tenants' alert emails (domain/alerts/): `file` writes one .eml per message into
   * `alertMailDir`; `smtp` hands it to the relay at `alertSmtpUrl` (set whenever `smtp` is);
   * `off` sends none
   */
  alertEmail: Value<'ALERT_EMAIL'>
  alertMailDir: string
  alertSmtpUrl: Value<'ALERT_SMTP_URL'> | null
  alertEmailFrom: Value<'ALERT_EMAIL_FROM'>
  /** deliveries per second to one webhook endpoint (its task queue's rate) */
  webhookEndpointRate: Value<'WEBHOOK_ENDPOINT_RATE'>
  /** endpoints with a task queue of their own; later ones share the pool (domain/webhooks/queue-pool.ts) */
  taskQueueDedicatedLimit: Value<'TASK_QUEUE_DEDICATED_LIMIT'>
  /** shared task queues for the endpoints past taskQueueDedicatedLimit */
  taskQueuePoolSize: Value<'TASK_QUEUE_POOL_SIZE'>
  /**
   * proxies in front of the service whose X-Forwarded-For entries are believed (0: none, the
   * socket's peer is the client). Behind the load balancer and Cloud Run: 2 (docs/operations.md)
   */
  trustedProxyHops: Value<'TRUSTED_PROXY_HOPS'>
  /** how long one dependency stage of the edge's push path may take before it answers 503 (http/dependency-deadline.ts) */
  edgeDependencyDeadlineMs: Value<'EDGE_DEPENDENCY_DEADLINE_MS'>
}

/** A Google backend is selected only with the project it lives in. */
type StoreSelection = { storeBackend: 'embedded' } | { storeBackend: 'firestore'; gcpProject: string }
type QueueSelection = { queueBackend: 'embedded' } | { queueBackend: 'pubsub'; gcpProject: string }
/** Cloud Tasks also needs the target and identity every task carries. */
type TasksSelection = { tasksBackend: 'embedded' } | { tasksBackend: 'cloudtasks'; gcpProject: string; dispatcherUrl: string; tasksServiceAccount: string }
type SecretsSelection = { secretsBackend: 'embedded' } | { secretsBackend: 'secretmanager'; gcpProject: string }

export type PlatformConfig = BaseConfig & StoreSelection & QueueSelection & TasksSelection & SecretsSelection

type Env = Record<string, string | undefined>

/** A port variable (PORT, EDGE_PORT, ...), checked against the schema; `fallback` when unset. */
export function port(env: Env, name: PortVariable, fallback: number): number {
  return readPort(env, name, fallback)
}

const BACKEND_VARIABLE = {
  store: 'STORE_BACKEND',
  queue: 'QUEUE_BACKEND',
  tasks: 'TASKS_BACKEND',
  secrets: 'SECRETS_BACKEND',
} as const satisfies Record<Backend, keyof Environment>
const PRODUCTION_BACKEND = {
  store: 'firestore',
  queue: 'pubsub',
  tasks: 'cloudtasks',
  secrets: 'secretmanager',
} as const satisfies Record<Backend, string>

/** The host of a host:port or of a URL, for the loopback check. */
function hostOf(value: string): string {
  if (/^https?:\/\//.test(value)) return new URL(value).hostname
  return value.replace(/:\d+$/, '')
}

/**
 * LOCAL_WIRING and the local-only variables. Outside production they are accepted as they are;
 * in production each needs LOCAL_WIRING=true and must point at this machine.
 */
function checkLocalWiring(v: Environment, production: boolean): void {
  if (v.LOCAL_WIRING && v.K_SERVICE) {
    throw new ConfigError(
      'LOCAL_WIRING',
      `must not be set on Cloud Run (K_SERVICE is "${v.K_SERVICE}"): it is for running the deployed shape on this machine only`,
    )
  }
  for (const name of LOCAL_WIRING_VARIABLES) {
    const value = v[name]
    if (value === undefined || value === false) continue
    if (name === 'ALLOW_LOOPBACK_WEBHOOKS' || name === 'LOCAL_FRONT_END_SECRET') {
      if (production && !v.LOCAL_WIRING) {
        throw new ConfigError(name, 'must not be set in production (local only; LOCAL_WIRING=true allows it on this machine)')
      }
      continue
    }
    if (production && !v.LOCAL_WIRING) {
      throw new ConfigError(name, 'is local-only wiring and refused in production (LOCAL_WIRING=true allows loopback stand-ins on this machine)')
    }
    if (v.LOCAL_WIRING && !isLoopbackHost(hostOf(String(value)))) {
      throw new ConfigError(name, `must point at a loopback address (127.0.0.0/8, localhost, [::1]) with LOCAL_WIRING=true (got "${value}")`)
    }
  }
}

/** Both of a pair or neither: one without the other would leave a route unverifiable. */
function pair(env: Env, a: keyof Environment, b: keyof Environment): void {
  const hasA = Boolean(env[a])
  const hasB = Boolean(env[b])
  if (hasA && !hasB) throw new ConfigError(b, `is required when ${a} is set`)
  if (hasB && !hasA) throw new ConfigError(a, `is required when ${b} is set`)
}

/** The relay's host name, or null when unset or not a URL. */
function smtpHostOf(url: string | undefined): string | null {
  try {
    return url ? new URL(url).hostname || null : null
  } catch {
    return null
  }
}

/**
 * Where alert emails go (ALERT_EMAIL), by default a folder outside production and nowhere in it.
 * Production refuses the folder (a container's disk is lost with it, and nobody reads it) unless
 * LOCAL_WIRING=true (the deployed shape on this machine), and with `smtp` needs the sender and a
 * relay that is not Terraform's placeholder (infra/secrets.tf, host `unset.invalid`).
 */
function checkedAlertEmail(v: Environment, production: boolean): Value<'ALERT_EMAIL'> {
  const alertEmail = v.ALERT_EMAIL ?? (production ? 'off' : 'file')
  if (alertEmail === 'smtp') {
    const host = smtpHostOf(v.ALERT_SMTP_URL)
    if (!host || host.endsWith('.invalid')) {
      throw new ConfigError(
        'ALERT_SMTP_URL',
        `is required with ALERT_EMAIL=smtp${host ? ' (it is the placeholder infra/ wrote: add the relay as a new version of the secret alert-smtp-url)' : ''}`,
      )
    }
  }
  if (!production) return alertEmail
  if (alertEmail === 'file' && !v.LOCAL_WIRING) {
    throw new ConfigError(
      'ALERT_EMAIL',
      'must not be file in production: nobody reads a folder in a container; use smtp (docs/deploy.md, "Alert emails") or off',
    )
  }
  if (alertEmail === 'smtp' && !v.ALERT_EMAIL_FROM) {
    throw new ConfigError('ALERT_EMAIL_FROM', 'is required in production with ALERT_EMAIL=smtp: the relay sends as this address')
  }
  return alertEmail
}

/** What each public origin is written into, for the production message. */
const PUBLIC_ORIGIN_USE = {
  PORTAL_BASE_URL: "links, sign-in URLs and a Contact's `links`",
  EDGE_BASE_URL_TEMPLATE: 'account and connection views (edge_base_url, webhook_url)',
} as const

/**
 * Reads and validates the configuration of `service` (null: a process that is no single service,
 * such as the local stack: it is checked for everything).
 */
export function loadConfig(env: Env = process.env, service: ServiceName | null = null): PlatformConfig {
  const v = readEnvironment(env)
  const production = v.NODE_ENV === 'production'
  const needs = needsOf(service)
  const who = service ?? 'this process'
  checkLocalWiring(v, production)
  const emulatorHosts = {
    firestore: v.FIRESTORE_EMULATOR_HOST ?? null,
    pubsub: v.PUBSUB_EMULATOR_HOST ?? null,
    cloudTasks: v.CLOUD_TASKS_EMULATOR_HOST ?? null,
    secretManager: v.SECRET_MANAGER_EMULATOR_HOST ?? null,
  }
  const selected = {
    store: v.STORE_BACKEND ?? (emulatorHosts.firestore ? 'firestore' : 'embedded'),
    queue: v.QUEUE_BACKEND ?? (emulatorHosts.pubsub ? 'pubsub' : 'embedded'),
    tasks: v.TASKS_BACKEND,
    secrets: v.SECRETS_BACKEND,
  } satisfies Record<Backend, string>
  if (production) {
    // the embedded adapters write to DATA_DIR: as non-root in the image that is EACCES, and in
    // any case it would be a private store per instance; say so instead of failing on the write
    for (const backend of needs.backends) {
      if (selected[backend] !== PRODUCTION_BACKEND[backend]) {
        const variable = BACKEND_VARIABLE[backend]
        const how = env[variable] ? `is "${env[variable]}"` : 'is not set (the default is embedded)'
        throw new ConfigError(
          variable,
          `${how}: the embedded adapters are for local development only; ${who} needs ${variable}=${PRODUCTION_BACKEND[backend]} in production`,
        )
      }
    }
  }
  // a selected Google backend lives in the project, whether this service uses it or not: the
  // type says that a Google selection carries its project
  const projectFor = (): string => {
    if (!v.GOOGLE_CLOUD_PROJECT) throw new ConfigError('GOOGLE_CLOUD_PROJECT', 'is required when a Google Cloud backend is selected')
    return v.GOOGLE_CLOUD_PROJECT
  }
  const store: StoreSelection = selected.store === 'firestore' ? { storeBackend: 'firestore', gcpProject: projectFor() } : { storeBackend: 'embedded' }
  const queue: QueueSelection = selected.queue === 'pubsub' ? { queueBackend: 'pubsub', gcpProject: projectFor() } : { queueBackend: 'embedded' }
  const secrets: SecretsSelection =
    selected.secrets === 'secretmanager' ? { secretsBackend: 'secretmanager', gcpProject: projectFor() } : { secretsBackend: 'embedded' }
  if (selected.tasks === 'cloudtasks') projectFor()
  if (production) {
    for (const name of needs.publicOrigins) {
      if (v[name] === undefined) {
        throw new ConfigError(
          name,
          `is required in production: ${who} writes it into ${PUBLIC_ORIGIN_USE[name]}, and the local default (localhost) would hand out an address nobody can reach`,
        )
      }
    }
  }
  const portalBaseUrl = v.PORTAL_BASE_URL ?? `http://localhost:${v.PORTAL_PORT}`
  const edgeBaseUrlTemplate = v.EDGE_BASE_URL_TEMPLATE ?? `http://{public_id}.${v.EDGE_DOMAIN}:${v.EDGE_PORT}`

  // internal routes and the tokens tasks carry
  const pushAudience = v.PUSH_AUDIENCE ?? null
  const pushServiceAccount = v.PUSH_SERVICE_ACCOUNT ?? null
  const tasksServiceAccount = v.TASKS_SERVICE_ACCOUNT ?? null
  const dispatcherUrl = v.DISPATCHER_URL ?? null
  if (production && needs.pushRoutes) {
    const why = `is required in production: ${who} verifies the OIDC token of Pub/Sub push on /pubsub/*`
    if (!pushAudience) throw new ConfigError('PUSH_AUDIENCE', why)
    if (!pushServiceAccount) throw new ConfigError('PUSH_SERVICE_ACCOUNT', why)
  }
  if (production && (needs.taskRoute || needs.createsTasks)) {
    const why = needs.taskRoute
      ? `is required in production: ${who} verifies the OIDC token of Cloud Tasks on /tasks/deliver`
      : `is required in production: ${who} creates delivery tasks that carry it`
    if (!dispatcherUrl) throw new ConfigError('DISPATCHER_URL', why)
    if (!tasksServiceAccount) throw new ConfigError('TASKS_SERVICE_ACCOUNT', why)
  }
  // a signature-stripped token proves something only where a front end checked it: on Cloud Run,
  // or in the deployed shape on this machine, whose push relay and Cloud Tasks stand-in play it
  if (v.INTERNAL_AUTH === 'front-end' && !v.K_SERVICE && !v.LOCAL_WIRING) {
    throw new ConfigError(
      'INTERNAL_AUTH',
      'may be front-end only behind Cloud Run (K_SERVICE set) or with LOCAL_WIRING=true: elsewhere no front end has checked the token signatures it would skip',
    )
  }
  // the local front end (push relay, Cloud Tasks stand-in) is the only way in only if the services
  // can tell its requests from any other process's on this machine: a per-run secret it adds
  if (v.INTERNAL_AUTH === 'front-end' && v.LOCAL_WIRING && (needs.pushRoutes || needs.taskRoute) && !v.LOCAL_FRONT_END_SECRET) {
    throw new ConfigError(
      'LOCAL_FRONT_END_SECRET',
      'is required with INTERNAL_AUTH=front-end and LOCAL_WIRING=true: without it any process on this machine could present a signature-stripped token',
    )
  }
  const alertEmail = checkedAlertEmail(v, production)
  pair(env, 'PUSH_AUDIENCE', 'PUSH_SERVICE_ACCOUNT')
  pair(env, 'DISPATCHER_URL', 'TASKS_SERVICE_ACCOUNT')
  pair(env, 'OIDC_ISSUER', 'OIDC_JWKS_URL')
  let tasks: TasksSelection = { tasksBackend: 'embedded' }
  if (selected.tasks === 'cloudtasks') {
    // whoever creates a task needs its target and identity, whether or not it uses tasks itself
    if (!dispatcherUrl) throw new ConfigError('DISPATCHER_URL', 'is required when TASKS_BACKEND=cloudtasks')
    if (!tasksServiceAccount) throw new ConfigError('TASKS_SERVICE_ACCOUNT', 'is required when TASKS_BACKEND=cloudtasks')
    if (v.WEBHOOK_ENDPOINT_RATE > 500) {
      throw new ConfigError('WEBHOOK_ENDPOINT_RATE', 'must be at most 500 with Cloud Tasks (its per-queue maximum)')
    }
    tasks = { tasksBackend: 'cloudtasks', gcpProject: projectFor(), dispatcherUrl, tasksServiceAccount }
  }

  const base: BaseConfig = {
    nodeEnv: v.NODE_ENV,
    service,
    logLevel: v.LOG_LEVEL ?? (v.NODE_ENV === 'test' ? 'silent' : 'info'),
    dataDir: v.DATA_DIR,
    gcpProject: v.GOOGLE_CLOUD_PROJECT ?? null,
    gcpRegion: v.GOOGLE_CLOUD_REGION,
    edgeDomain: v.EDGE_DOMAIN,
    portalBaseUrl,
    edgeBaseUrlTemplate,
    partnerCrmTokenCutover: v.PARTNERCRM_TOKEN_CUTOVER ?? null,
    allowLoopbackWebhooks: v.ALLOW_LOOPBACK_WEBHOOKS,
    dispatcherUrl,
    tasksServiceAccount,
    pushAudience,
    pushServiceAccount,
    oidc: v.OIDC_ISSUER && v.OIDC_JWKS_URL ? { issuer: v.OIDC_ISSUER, jwksUrl: v.OIDC_JWKS_URL } : null,
    internalAuth: v.INTERNAL_AUTH,
    localFrontEndSecret: v.LOCAL_FRONT_END_SECRET ?? null,
    localWiring: v.LOCAL_WIRING,
    emulatorHosts,
    pubsubNamePrefix: v.PUBSUB_NAME_PREFIX ?? null,
    operatorToken: v.OPERATOR_TOKEN ?? null,
    keyPepper: v.KEY_PEPPER ?? null,
    operatorEventsUrl: v.OPERATOR_EVENTS_URL ?? null,
    operatorEventsSecret: v.OPERATOR_EVENTS_SECRET ?? null,
    alertEmail,
    alertMailDir: v.ALERT_MAIL_DIR ?? `${v.DATA_DIR}/alert-mail`,
    alertSmtpUrl: v.ALERT_SMTP_URL ?? null,
    alertEmailFrom: v.ALERT_EMAIL_FROM ?? 'alerts@localhost',
    webhookEndpointRate: v.WEBHOOK_ENDPOINT_RATE,
    taskQueueDedicatedLimit: v.TASK_QUEUE_DEDICATED_LIMIT,
    taskQueuePoolSize: v.TASK_QUEUE_POOL_SIZE,
    trustedProxyHops: v.TRUSTED_PROXY_HOPS,
    edgeDependencyDeadlineMs: v.EDGE_DEPENDENCY_DEADLINE_MS,
  }
  return { ...base, ...store, ...queue, ...tasks, ...secrets }
}

/** Builds the absolute edge origin of one account from the template. */
export function edgeBaseUrlFor(config: Pick<PlatformConfig, 'edgeBaseUrlTemplate'>, publicId: string): string {
  return config.edgeBaseUrlTemplate.replace('{public_id}', publicId)
}
