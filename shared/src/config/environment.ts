/**
 * The environment, as one TypeBox schema: for each variable its form (enum, pattern, or a check),
 * its default, what it means, which processes read it, and whether it is local-only wiring.
 * readEnvironment() checks every variable that is set, once, and decodes the lot; its type is
 * the schema's StaticDecode, so a variable with a default is never undefined and a number is a
 * number. The rules between variables (production, pairs, LOCAL_WIRING) are loadConfig's
 * (config.ts). README.md's configuration table is generated from this schema (readme-table.ts).
 *
 * Each variable is a string in the environment: the schema states the string's form and the
 * decoder turns it into the value the code uses (a boolean, a number, a Date, a URL without a
 * trailing slash). Unset and empty are the same: an empty Terraform variable means "not set".
 */
import { Type, type StaticDecode, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { ConfigError } from './config-error.ts'
import { SERVICE_NAMES, servicesWhere, type ServiceName } from './services.ts'

/** Who reads a variable: a service, or the local stack (`npm start`, `npm run start:cloud`). */
export type Reader = ServiceName | 'local stack'

/** What the schema says about a variable besides its form (JSON Schema annotations, `x-` for ours). */
export type VariableAnnotations = {
  description: string
  /** the raw default, as it would be written in the environment */
  default?: string
  /** the form in words: the README's "value" column, and a bad value's message ("must be <form>") */
  'x-form': string
  'x-readers': readonly Reader[]
  /** local-only wiring: refused in production unless LOCAL_WIRING=true, which admits loopback only */
  'x-local-only'?: true
  /** the README's default when it is computed at load time from other variables */
  'x-default'?: string
}

interface Doc {
  description: string
  readers: readonly Reader[]
  default?: string
  defaultText?: string
  localOnly?: true
}

function annotations(form: string, doc: Doc): VariableAnnotations {
  return {
    description: doc.description,
    ...(doc.default !== undefined ? { default: doc.default } : {}),
    'x-form': form,
    'x-readers': doc.readers,
    ...(doc.localOnly ? { 'x-local-only': true as const } : {}),
    ...(doc.defaultText !== undefined ? { 'x-default': doc.defaultText } : {}),
  }
}

/** A pattern matching `words` in any letter case (JSON Schema patterns have no `i` flag). */
function anyCase(words: readonly string[]): string {
  const letter = (c: string) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toLowerCase()}${c.toUpperCase()}]`)
  return `^(?:${words.map((w) => [...w].map(letter).join('')).join('|')})$`
}

const TRUE_WORDS = ['1', 'true', 'yes']
const FALSE_WORDS = ['0', 'false', 'no']

function oneOf<const V extends string[]>(values: readonly [...V], doc: Doc) {
  return Type.Enum(values, annotations(`one of ${values.join(', ')}`, doc))
}

function bool(doc: Doc) {
  return Type.Decode(Type.String({ pattern: anyCase([...TRUE_WORDS, ...FALSE_WORDS]), ...annotations('true or false', doc) }), (raw) =>
    TRUE_WORDS.includes(raw.toLowerCase()),
  )
}

function isHttpUrl(raw: string): boolean {
  try {
    const u = new URL(raw.replace('{public_id}', 'x'))
    return u.protocol === 'http:' || u.protocol === 'https:'
  } catch {
    return false
  }
}

/** An absolute http(s) URL; the decoded value has no trailing slash (paths are appended to it). */
function origin(doc: Doc) {
  return Type.Decode(Type.Refine(Type.String(annotations('an absolute http(s) URL', doc)), isHttpUrl), (raw) => raw.replace(/\/+$/, ''))
}

/** An absolute http(s) URL kept exactly as written (an issuer is compared byte for byte). */
function exactUrl(doc: Doc) {
  return Type.Refine(Type.String(annotations('an absolute http(s) URL', doc)), isHttpUrl)
}

function hostPort(doc: Doc) {
  return Type.String({ pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):\\d{1,5}$', ...annotations('host:port', doc) })
}

function port(doc: Doc) {
  return Type.Decode(
    Type.Refine(Type.String({ pattern: '^[0-9]{1,5}$', ...annotations('a TCP port 0..65535', doc) }), (raw) => Number(raw) <= 65535),
    Number,
  )
}

function positiveNumber(doc: Doc) {
  return Type.Decode(
    Type.Refine(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', ...annotations('a positive number', doc) }), (raw) => Number(raw) > 0),
    Number,
  )
}

/** A fraction 0..1 (the schema checks the digits, the decoder the range). */
function fraction(doc: Doc) {
  return Type.Decode(
    Type.Refine(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', ...annotations('a number 0..1', doc) }), (raw) => Number(raw) <= 1),
    Number,
  )
}

/** A whole number in min..max (the schema checks the digits, the decoder the range). */
function integerIn(min: number, max: number, doc: Doc) {
  return Type.Decode(
    Type.Refine(Type.String({ pattern: '^[0-9]{1,6}$', ...annotations(`an integer ${min}..${max}`, doc) }), (raw) => Number(raw) >= min && Number(raw) <= max),
    Number,
  )
}

function instant(doc: Doc) {
  return Type.Decode(
    Type.Refine(Type.String(annotations('an ISO-8601 date', doc)), (raw) => !Number.isNaN(new Date(raw).getTime())),
    (raw) => new Date(raw),
  )
}

function text(form: string, doc: Doc, pattern?: string) {
  return Type.String({ minLength: 1, ...(pattern ? { pattern } : {}), ...annotations(form, doc) })
}

const EMAIL = '^[^@\\s]+@[^@\\s]+$'
const ALL: readonly Reader[] = SERVICE_NAMES
const LOCAL_STACK: readonly Reader[] = ['local stack']
const using = servicesWhere

/** Every variable, in the order of the README table. */
const ENVIRONMENT = Type.Object({
  NODE_ENV: oneOf(['development', 'production', 'test'], {
    readers: ALL,
    default: 'development',
    description:
      '`production`: each backend a service uses must be the Google one, the identities of its internal routes and its public origins must be set, local-only variables are refused',
  }),
  LOG_LEVEL: Type.Optional(
    oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      readers: ALL,
      defaultText: '`info` (`silent` under `NODE_ENV=test`)',
      description: "pino level; JSON lines in Cloud Logging's shape, pretty on a terminal",
    }),
  ),
  TRACE_EXPORTER: Type.Optional(
    oneOf(['cloud-trace', 'otlp', 'file', 'none'], {
      readers: [...ALL, 'local stack'],
      defaultText:
        '`otlp` when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, else `cloud-trace` in production (not `LOCAL_WIRING`), `none` under `NODE_ENV=test`, else `file`',
      description:
        'where OpenTelemetry spans go: Cloud Trace, an OTLP/HTTP collector, or the last spans of each process as JSON lines in `DATA_DIR/traces/<process>.jsonl` (docs/operations.md, "Traces")',
    }),
  ),
  TRACE_SAMPLE_RATIO: fraction({
    readers: [...ALL, 'local stack'],
    default: '1',
    description:
      "the share of traces started here that are kept (a request without a sampled `traceparent`/`X-Cloud-Trace-Context`): parent-based, so a served caller's sampling decision is always honoured; sized against Cloud Trace's quotas in docs/capacity.md",
  }),
  TRACE_REFUSED_REQUESTS: bool({
    readers: [...ALL, 'local stack'],
    default: 'false',
    description:
      '`true`: requests refused before they were served (401, 403, 404, 405, 413, 429, or a 4xx on a path no route serves) are sampled like any other; by default they export no span, even with a sampled trace header, so unknown callers cannot spend the Cloud Trace quota (docs/operations.md, "Traces")',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(
    origin({
      readers: [...ALL, 'local stack'],
      defaultText: 'unset',
      description: 'OTLP/HTTP collector (JSON, `<endpoint>/v1/traces`); set, spans go there unless `TRACE_EXPORTER` says otherwise',
    }),
  ),
  DATA_DIR: text('a folder', { readers: ALL, default: '.data', description: 'folder of the embedded adapters (SQLite database, secrets files)' }),
  STORE_BACKEND: Type.Optional(
    oneOf(['embedded', 'firestore'], {
      readers: using((n) => n.backends.includes('store')),
      defaultText: '`embedded` (`firestore` when `FIRESTORE_EMULATOR_HOST` is set)',
      description: 'contact and tenant stores, rate limits, portal sessions',
    }),
  ),
  QUEUE_BACKEND: Type.Optional(
    oneOf(['embedded', 'pubsub'], {
      readers: using((n) => n.backends.includes('queue')),
      defaultText: '`embedded` (`pubsub` when `PUBSUB_EMULATOR_HOST` is set)',
      description: 'message queue (contact batches, visit events, contact changes)',
    }),
  ),
  TASKS_BACKEND: oneOf(['embedded', 'cloudtasks'], {
    readers: using((n) => n.backends.includes('tasks')),
    default: 'embedded',
    description: 'webhook delivery scheduler; `cloudtasks` needs `DISPATCHER_URL` and `TASKS_SERVICE_ACCOUNT`',
  }),
  SECRETS_BACKEND: oneOf(['embedded', 'secretmanager'], {
    readers: using((n) => n.backends.includes('secrets')),
    default: 'embedded',
    description:
      'where `link-signing-keys`, `operator-token` and `key-pepper` are kept: files in `DATA_DIR/secrets` (created on first use), or Secret Manager (provisioned by Terraform)',
  }),
  GOOGLE_CLOUD_PROJECT: Type.Optional(
    text(
      'a Google Cloud project id',
      {
        readers: ALL,
        description: 'required when any Google Cloud backend is selected',
      },
      '^[a-z][a-z0-9-]{4,29}$',
    ),
  ),
  GOOGLE_CLOUD_REGION: text(
    'a Google Cloud region',
    {
      readers: using((n) => n.backends.includes('tasks')),
      default: 'europe-west1',
      description: 'Cloud Tasks location',
    },
    '^[a-z]+-[a-z]+\\d+$',
  ),
  EDGE_DOMAIN: text(
    'a domain name',
    {
      readers: ['edge-ingest'],
      default: 'edge.localhost',
      description: 'tenants call `<public_id>.<EDGE_DOMAIN>`; the edge finds the account from the Host',
    },
    '^[a-z0-9.-]+$',
  ),
  EDGE_BASE_URL_TEMPLATE: Type.Optional(
    origin({
      readers: using((n) => n.publicOrigins.includes('EDGE_BASE_URL_TEMPLATE')),
      defaultText: '`http://{public_id}.<EDGE_DOMAIN>:<EDGE_PORT>`; required in production',
      description: 'absolute edge origin of an account (`{public_id}` replaced) in account and connection views and webhook URLs',
    }),
  ),
  PORTAL_BASE_URL: Type.Optional(
    origin({
      readers: using((n) => n.publicOrigins.includes('PORTAL_BASE_URL')),
      defaultText: '`http://localhost:<PORTAL_PORT>`; required in production',
      description: "absolute portal origin in links, sign-in URLs and a Contact's `links`",
    }),
  ),
  OPERATOR_TOKEN: Type.Optional(
    text('a token', {
      readers: using((n) => n.envSecrets.includes('OPERATOR_TOKEN')),
      defaultText: 'from the secrets backend (`operator-token`, generated on first use when file-backed)',
      description: 'management API bearer token; in Cloud Run from Secret Manager `operator-token`',
    }),
  ),
  KEY_PEPPER: Type.Optional(
    text('a secret', {
      readers: using((n) => n.envSecrets.includes('KEY_PEPPER')),
      defaultText: 'from the secrets backend (`key-pepper`, generated on first use when file-backed)',
      description: 'HMAC key of API key and source token hashes; in Cloud Run from Secret Manager `key-pepper`',
    }),
  ),
  PARTNERCRM_TOKEN_CUTOVER: Type.Optional(
    instant({
      readers: ['edge-ingest', 'portal-api'],
      defaultText: 'unset (token-less calls accepted, flagged)',
      description: 'instant after which token-less partner CRM calls answer 401',
    }),
  ),
  OPERATOR_EVENTS_URL: Type.Optional(
    exactUrl({
      readers: ALL,
      defaultText: 'unset (operational events are logged, not sent)',
      description:
        'where operational events (`endpoint.failing`, `endpoint.disabled`, `batch.dead_lettered`, `queue.created_late`) are POSTed, signed as Standard Webhooks (docs/operations.md, "Operational events"); Terraform `var.operator_events_url`',
    }),
  ),
  OPERATOR_EVENTS_SECRET: Type.Optional(
    text('a secret', {
      readers: ALL,
      defaultText: 'from the secrets backend (`operator-events-secret`, generated on first use when file-backed)',
      description: 'the `whsec_…` secret that signs operational events; in Cloud Run from Secret Manager `operator-events-secret`',
    }),
  ),
  ALERT_EMAIL: Type.Optional(
    oneOf(['off', 'file', 'smtp'], {
      readers: ['portal-api', 'webhook-dispatcher'],
      defaultText: '`file` outside production, `off` in production',
      description:
        'where the tenants\' endpoint alert emails go (Settings, Alerts; docs/webhooks.md, "Endpoint alerts"): one `.eml` file per message in `ALERT_MAIL_DIR` (refused in production unless `LOCAL_WIRING=true`), an SMTP relay (`ALERT_SMTP_URL`), or nowhere; Terraform `var.tenant_alert_email`',
    }),
  ),
  ALERT_MAIL_DIR: Type.Optional(
    text('a folder', {
      readers: ['portal-api', 'webhook-dispatcher'],
      defaultText: '`DATA_DIR/alert-mail`',
      description: 'with `ALERT_EMAIL=file`: the folder that gets one `<time>-<alert id>.eml` file per alert email',
    }),
  ),
  ALERT_SMTP_URL: Type.Optional(
    text(
      'an smtp:// or smtps:// URL',
      {
        readers: using((n) => n.envSecrets.includes('ALERT_SMTP_URL')),
        defaultText: 'unset; required with `ALERT_EMAIL=smtp`',
        description:
          'with `ALERT_EMAIL=smtp`: the relay and its credentials, such as `smtps://apikey:<key>@smtp.sendgrid.net:465` (Google Cloud blocks outbound port 25: use 465 or 587; docs/deploy.md, "Alert emails"); in Cloud Run from Secret Manager `alert-smtp-url`, whose placeholder first version (host `unset.invalid`) is refused',
      },
      '^[sS][mM][tT][pP][sS]?://',
    ),
  ),
  ALERT_EMAIL_FROM: Type.Optional(
    text(
      'an email address',
      {
        readers: ['portal-api', 'webhook-dispatcher'],
        defaultText: '`alerts@localhost`; required in production with `ALERT_EMAIL=smtp`',
        description: 'the sender of alert emails (a sender the relay accepts for your domain); Terraform `var.tenant_alert_email_from`',
      },
      EMAIL,
    ),
  ),
  WEBHOOK_ENDPOINT_RATE: positiveNumber({
    readers: using((n) => n.createsTasks),
    default: '100',
    description: "deliveries per second to one webhook endpoint (its task queue's rate; at most 500 with Cloud Tasks); Terraform `var.webhook_endpoint_rate`",
  }),
  TASK_QUEUE_DEDICATED_LIMIT: integerIn(0, 100_000, {
    readers: using((n) => n.createsTasks),
    default: '900',
    description:
      'webhook endpoints that get a task queue of their own; later ones share the pool (docs/capacity.md, "Past 1,000 endpoints"). With `TASK_QUEUE_POOL_SIZE`, keep it under the Cloud Tasks queue quota (1,000 per region by default)',
  }),
  TASK_QUEUE_POOL_SIZE: integerIn(1, 100, {
    readers: using((n) => n.createsTasks),
    default: '32',
    description:
      'shared task queues for the endpoints past `TASK_QUEUE_DEDICATED_LIMIT` (`webhook-pool-00`…); Terraform `var.task_queue_pool_size` creates them',
  }),
  TRUSTED_PROXY_HOPS: Type.Decode(
    Type.String({
      pattern: '^(?:[0-9]|10)$',
      ...annotations('an integer 0..10', {
        readers: ['edge-ingest', 'portal-api'],
        default: '0',
        description:
          "proxies in front of the service whose `X-Forwarded-For` entries are believed (0: the socket's peer is the client; behind the load balancer and Cloud Run: 2)",
      }),
    }),
    Number,
  ),
  EDGE_DEPENDENCY_DEADLINE_MS: integerIn(100, 60_000, {
    readers: ['edge-ingest', 'portal-api'],
    default: '5000',
    description:
      'milliseconds one dependency stage of a push (the checks before the body; the partner CRM\'s checks after it), or the account lookup of `POST …/visits`, may take before the answer is 503 `temporarily unavailable` with `Retry-After`; a queue publish is never cut by it (a 503 means not queued: docs/architecture.md, "Dependency deadlines")',
  }),
  PUSH_AUDIENCE: Type.Optional(
    text("an audience (the service's Cloud Run URL)", {
      readers: using((n) => n.pushRoutes),
      defaultText: 'unset: loopback callers only; required in production',
      description: "`/pubsub/*` accept only an ID token with this `aud` (and `PUSH_SERVICE_ACCOUNT`'s email)",
    }),
  ),
  PUSH_SERVICE_ACCOUNT: Type.Optional(
    text(
      'an email address',
      {
        readers: using((n) => n.pushRoutes),
        defaultText: 'unset: loopback callers only; required in production',
        description: 'the service account whose ID tokens Pub/Sub push presents on `/pubsub/*`',
      },
      EMAIL,
    ),
  ),
  DISPATCHER_URL: Type.Optional(
    origin({
      readers: using((n) => n.taskRoute || n.createsTasks),
      defaultText: 'unset: loopback callers only; required in production',
      description: 'webhook-dispatcher origin: tasks target `DISPATCHER_URL/tasks/deliver` with it as the OIDC audience, which `/tasks/deliver` checks',
    }),
  ),
  TASKS_SERVICE_ACCOUNT: Type.Optional(
    text(
      'an email address',
      {
        readers: using((n) => n.taskRoute || n.createsTasks),
        defaultText: 'unset: loopback callers only; required in production',
        description: 'the identity of the ID token each task carries (and the only one `/tasks/deliver` accepts)',
      },
      EMAIL,
    ),
  ),
  INTERNAL_AUTH: oneOf(['verify', 'front-end'], {
    readers: using((n) => n.pushRoutes || n.taskRoute),
    default: 'verify',
    description:
      "who checks the internal routes' ID token signature: `verify`, the service itself; `front-end`, Cloud Run's front end (invoker IAM), which forwards the token with its signature replaced by `SIGNATURE_REMOVED_BY_GOOGLE`: such a token is then accepted on its claims, a signed one is still verified. Needs `K_SERVICE` (Cloud Run) or `LOCAL_WIRING=true`; Terraform sets `front-end`",
  }),
  LOCAL_WIRING: bool({
    readers: ALL,
    default: 'false',
    description: 'allows the *local* variables in production, loopback only (the deployed shape on this machine, `npm run start:cloud`)',
  }),
  K_SERVICE: Type.Optional(
    text('a Cloud Run service name', {
      readers: ALL,
      defaultText: 'set by Cloud Run',
      description: 'never set by hand: `LOCAL_WIRING` is refused where it is set',
    }),
  ),
  ALLOW_LOOPBACK_WEBHOOKS: bool({
    readers: ['portal-api', 'webhook-dispatcher'],
    default: 'false',
    defaultText: '`false` (`true` under `npm start`)',
    localOnly: true,
    description: 'accept and deliver to webhook receivers on loopback (never private or link-local ranges)',
  }),
  FIRESTORE_EMULATOR_HOST: Type.Optional(hostPort({ readers: ALL, localOnly: true, description: 'the Firestore emulator' })),
  PUBSUB_EMULATOR_HOST: Type.Optional(hostPort({ readers: ALL, localOnly: true, description: 'the Pub/Sub emulator' })),
  CLOUD_TASKS_EMULATOR_HOST: Type.Optional(
    hostPort({
      readers: using((n) => n.backends.includes('tasks')),
      localOnly: true,
      description: 'a stand-in speaking Cloud Tasks REST v2 over HTTP',
    }),
  ),
  SECRET_MANAGER_EMULATOR_HOST: Type.Optional(
    hostPort({
      readers: using((n) => n.backends.includes('secrets')),
      localOnly: true,
      description: 'a stand-in speaking Secret Manager REST v1 over HTTP',
    }),
  ),
  OIDC_ISSUER: Type.Optional(
    exactUrl({
      readers: using((n) => n.pushRoutes || n.taskRoute),
      defaultText: 'Google',
      localOnly: true,
      description: "verify internal-route tokens against this issuer (with `OIDC_JWKS_URL`) instead of Google's",
    }),
  ),
  OIDC_JWKS_URL: Type.Optional(
    exactUrl({
      readers: using((n) => n.pushRoutes || n.taskRoute),
      defaultText: 'Google',
      localOnly: true,
      description: 'the key set of `OIDC_ISSUER`',
    }),
  ),
  LOCAL_FRONT_END_SECRET: Type.Optional(
    text(
      'at least 32 characters of [A-Za-z0-9_-]',
      {
        readers: using((n) => n.pushRoutes || n.taskRoute),
        defaultText: 'unset; set by `npm run start:cloud`, a new one each run',
        localOnly: true,
        description:
          "with `INTERNAL_AUTH=front-end` and `LOCAL_WIRING=true` (required there): the internal routes admit only requests carrying it in `X-Local-Front-End`, which only start:cloud's push relay and Cloud Tasks stand-in (the played front end) add, so no other process on this machine can present a signature-stripped token",
      },
      '^[A-Za-z0-9_-]{32,}$',
    ),
  ),
  PUBSUB_NAME_PREFIX: Type.Optional(
    text(
      'a name prefix',
      {
        readers: ALL,
        defaultText: 'none',
        description: 'prefix of every topic and subscription name (tests sharing one emulator)',
      },
      '^[A-Za-z0-9._~+%-]+$',
    ),
  ),
  LISTEN_HOST: Type.Optional(
    text(
      'an IP address (`127.0.0.1`, `0.0.0.0`, `::1`, `::`, …)',
      {
        readers: ALL,
        defaultText:
          "`127.0.0.1` under `npm start` and `npm run start:cloud`; `0.0.0.0` for one service run on its own (`server.ts`: Cloud Run sends to the container's every interface)",
        description:
          'the address the services listen on. `npm start` and `npm run start:cloud` are reachable from this machine only unless this opens them (`0.0.0.0`): the local stack has no TLS, its management API answers a token kept in `.data`, and its internal routes trust loopback callers (an address other than loopback prints a warning saying so)',
      },
      '^(?:[0-9]{1,3}(?:\\.[0-9]{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)$',
    ),
  ),
  PORT: Type.Optional(port({ readers: ALL, defaultText: "the service's local port (8080–8083)", description: 'listen port of one service (`server.ts`)' })),
  EDGE_PORT: port({
    readers: LOCAL_STACK,
    default: '8080',
    description: "edge-ingest's port in the local stack (and in `EDGE_BASE_URL_TEMPLATE`'s local default)",
  }),
  PORTAL_PORT: port({ readers: LOCAL_STACK, default: '8081', description: "portal-api's port in the local stack (and in `PORTAL_BASE_URL`'s local default)" }),
  UPSERT_WORKER_PORT: port({ readers: LOCAL_STACK, default: '8082', description: "upsert-worker's port in the local stack" }),
  WEBHOOK_DISPATCHER_PORT: port({ readers: LOCAL_STACK, default: '8083', description: "webhook-dispatcher's port in the local stack" }),
})

export type Environment = StaticDecode<typeof ENVIRONMENT>
export type VariableName = keyof typeof ENVIRONMENT.properties
export type PortVariable = 'PORT' | 'EDGE_PORT' | 'PORTAL_PORT' | 'UPSERT_WORKER_PORT' | 'WEBHOOK_DISPATCHER_PORT'

export const VARIABLE_NAMES = Object.keys(ENVIRONMENT.properties) as VariableName[]

export function annotationsOf(name: VariableName): VariableAnnotations {
  return ENVIRONMENT.properties[name] as unknown as VariableAnnotations
}

/** Variables that wire a process to local stand-ins: refused in production unless LOCAL_WIRING=true. */
export const LOCAL_WIRING_VARIABLES: readonly VariableName[] = VARIABLE_NAMES.filter((name) => annotationsOf(name)['x-local-only'])

type Env = Record<string, string | undefined>

/** The value as set; unset and empty are the same. */
function rawOf(env: Env, name: VariableName): string | undefined {
  const raw = env[name]
  return raw === undefined || raw === '' ? undefined : raw
}

/** Throws a ConfigError naming the variable when `raw` is not of its form. */
function check(name: VariableName, raw: string): void {
  const schema = ENVIRONMENT.properties[name] as TSchema
  if (!Value.Check(schema, raw)) throw new ConfigError(name, `must be ${annotationsOf(name)['x-form']} (got "${raw}")`)
}

/** One port variable, checked and decoded (the fallback is the caller's: each service has its own). */
export function readPort(env: Env, name: PortVariable, fallback: number): number {
  const raw = rawOf(env, name)
  if (raw === undefined) return fallback
  check(name, raw)
  return Number(raw)
}

/** The listen address: LISTEN_HOST, checked, or the caller's fallback (which depends on how the process runs). */
export function readListenHost(env: Env, fallback: string): string {
  const raw = rawOf(env, 'LISTEN_HOST')
  if (raw === undefined) return fallback
  check('LISTEN_HOST', raw)
  return raw
}

/**
 * Checks every variable that is set against its form (the first bad one throws, naming it),
 * fills the static defaults, and decodes. Variables outside the schema are ignored.
 */
export function readEnvironment(env: Env): Environment {
  const present: Record<string, string> = {}
  for (const name of VARIABLE_NAMES) {
    const raw = rawOf(env, name)
    if (raw === undefined) continue
    check(name, raw)
    present[name] = raw
  }
  return Value.Decode(ENVIRONMENT, Value.Default(ENVIRONMENT, present))
}
