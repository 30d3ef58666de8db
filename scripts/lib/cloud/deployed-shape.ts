/**
 * What Terraform deploys, read from infra/ by code and translated to this machine: each service's
 * environment (service-env.tf) with the Cloud Run URLs replaced by the local services' addresses,
 * the Pub/Sub topics and subscriptions, the secrets, the Cloud Tasks queues and the IAM grants the
 * stand-ins enforce. Nothing here is copied by hand from infra/: change Terraform and the local
 * run changes with it (or says which expression it cannot follow).
 */
import { HclError, isPlainObject, type LazyObject, type HclValue } from './hcl-expr.ts'
import { cloudRunResource } from './iam.ts'
import { loadTerraform, type TerraformModule } from './terraform.ts'

const SERVICE_NAMES = ['edge-ingest', 'portal-api', 'upsert-worker', 'webhook-dispatcher'] as const
export type CloudServiceName = (typeof SERVICE_NAMES)[number]

/** The project number Google would assign; only the fake Cloud Run URLs and agent emails use it. */
const FAKE_PROJECT_NUMBER = '123456789012'

export interface LocalSettings {
  infraDir: string
  project: string
  /** local port of each service (npm start's defaults: 8080..8083) */
  ports: Record<CloudServiceName, number>
  edgeDomain: string
  /** `http://{public_id}.<edgeDomain>:<edge port>` unless overridden */
  edgeBaseUrlTemplate: string
  portalBaseUrl: string
  /** `var.operator_events_url` (start:cloud's OPERATOR_EVENTS_URL); unset: the variable's default (empty: events only logged) */
  operatorEventsUrl?: string | null
}

export interface ServiceShape {
  name: CloudServiceName
  port: number
  /** http://127.0.0.1:<port>: what `local.service_url[name]` becomes */
  url: string
  /** its runtime service account (google_service_account.service[name].email) */
  serviceAccount: string
  /** exactly local.service_env[name], translated to this machine */
  env: Record<string, string>
  /** local.service_secret_env[name]: variable → secret id */
  secretEnv: Record<string, string>
}

export interface SubscriptionShape {
  name: string
  topic: string
  ackDeadlineSeconds: number
  retryPolicy: { minimumBackoff: string; maximumBackoff: string } | null
  deadLetterPolicy: { deadLetterTopic: string; maxDeliveryAttempts: number } | null
  messageRetentionDuration: string | null
  /** null: a pull subscription (dead-letter subs, and the BigQuery subscription replaced by one) */
  push: {
    /** where Terraform points the push, translated to the local service */
    endpoint: string
    oidc: { serviceAccountEmail: string; audience: string } | null
    noWrapper: { writeMetadata: boolean } | null
  } | null
  /** set when Terraform declares a BigQuery subscription: locally a pull subscription to read */
  replacesBigQuery: boolean
}

interface QueueShape {
  name: string
  location: string
  rateLimits: { maxDispatchesPerSecond: number; maxConcurrentDispatches: number } | null
  retryConfig: { maxAttempts: number; minBackoffSeconds: number; maxBackoffSeconds: number; maxDoublings: number } | null
}

/** One IAM grant: `member` has `role` on `resource` ("project", a secret, a service account, a queue, a Cloud Run service). */
export interface Grant {
  member: string
  role: string
  resource: string
  /** an IAM condition (CEL) start:cloud does not evaluate: the grant applies unconditionally here */
  condition?: string
}

export interface DeployedShape {
  project: string
  region: string
  services: ServiceShape[]
  topics: string[]
  subscriptions: SubscriptionShape[]
  /** secret ids (google_secret_manager_secret) */
  secrets: string[]
  queues: QueueShape[]
  grants: Grant[]
  /** custom roles (google_project_iam_custom_role): role name → permissions */
  customRoles: Record<string, string[]>
}

function str(v: HclValue, where: string): string {
  if (typeof v === 'string') return v
  throw new HclError(`${where} is not a string`)
}

function num(v: HclValue, where: string): number {
  if (typeof v === 'number') return v
  if (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v)) return Number(v)
  throw new HclError(`${where} is not a number`)
}

function seconds(v: string, where: string): number {
  const m = /^(\d+(?:\.\d+)?)s$/.exec(v)
  if (!m) throw new HclError(`${where} is not a duration in seconds ("10s"): ${v}`)
  return Number(m[1])
}

/** The one block of a nested block list (hcl2json gives blocks as arrays), or null when absent. */
function block(attrs: LazyObject, name: string, where: string): Record<string, HclValue> | null {
  let v: HclValue
  try {
    v = attrs.get(name)
  } catch (err) {
    if (err instanceof HclError && err.message.includes('is neither set')) return null
    throw err
  }
  if (!Array.isArray(v) || v.length !== 1 || !isPlainObject(v[0]!)) throw new HclError(`${where}.${name} is not one block`)
  return v[0]
}

function optional(attrs: LazyObject, name: string): HclValue | undefined {
  try {
    return attrs.get(name)
  } catch (err) {
    if (err instanceof HclError && err.message.includes('is neither set')) return undefined
    throw err
  }
}

/** Env values as Cloud Run sets them: strings (numbers and booleans as Terraform prints them). */
function envValue(v: HclValue, where: string): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw new HclError(`${where} is not a plain value`)
}

/** Subscription attributes start:cloud reproduces; any other one is refused rather than dropped. */
const SUBSCRIPTION_ATTRIBUTES = new Set([
  'name',
  'topic',
  'ack_deadline_seconds',
  'push_config',
  'bigquery_config',
  'retry_policy',
  'dead_letter_policy',
  'expiration_policy',
  'message_retention_duration',
  'depends_on',
  'for_each',
  'labels',
  'project',
])
const PUSH_CONFIG_ATTRIBUTES = new Set(['push_endpoint', 'oidc_token', 'no_wrapper'])

function subscriptionShape(raw: Record<string, unknown>, attrs: LazyObject, where: string, localUrls: string[]): SubscriptionShape {
  for (const key of Object.keys(raw)) {
    if (!SUBSCRIPTION_ATTRIBUTES.has(key))
      throw new HclError(`${where}: start:cloud does not reproduce "${key}" on the emulator; teach scripts/lib/cloud/deployed-shape.ts`)
  }
  const name = str(attrs.get('name'), `${where}.name`)
  const topic = str(attrs.get('topic'), `${where}.topic`).replace(/^projects\/[^/]+\/topics\//, '')
  const ack = optional(attrs, 'ack_deadline_seconds')
  const retry = block(attrs, 'retry_policy', where)
  const dead = block(attrs, 'dead_letter_policy', where)
  const retention = optional(attrs, 'message_retention_duration')
  const push = block(attrs, 'push_config', where)
  const bigquery = block(attrs, 'bigquery_config', where)
  let pushShape: SubscriptionShape['push'] = null
  if (push) {
    for (const key of Object.keys(push)) {
      if (!PUSH_CONFIG_ATTRIBUTES.has(key)) throw new HclError(`${where}.push_config: start:cloud does not reproduce "${key}"`)
    }
    const endpoint = str(push.push_endpoint ?? null, `${where}.push_config.push_endpoint`)
    if (!localUrls.some((u) => endpoint === u || endpoint.startsWith(`${u}/`))) {
      throw new HclError(`${where}.push_config.push_endpoint "${endpoint}" is not the URL of one of the four services (local.service_url)`)
    }
    const oidc = push.oidc_token as HclValue[] | undefined
    const oidcBlock = oidc && oidc.length === 1 && isPlainObject(oidc[0]!) ? oidc[0] : null
    const noWrapper = push.no_wrapper as HclValue[] | undefined
    const noWrapperBlock = noWrapper && noWrapper.length === 1 && isPlainObject(noWrapper[0]!) ? noWrapper[0] : null
    pushShape = {
      endpoint,
      oidc: oidcBlock
        ? {
            serviceAccountEmail: str(oidcBlock.service_account_email ?? null, `${where}.push_config.oidc_token.service_account_email`),
            // Pub/Sub uses the push endpoint as audience when none is set
            audience: oidcBlock.audience === undefined ? endpoint : str(oidcBlock.audience, `${where}.push_config.oidc_token.audience`),
          }
        : null,
      noWrapper: noWrapperBlock ? { writeMetadata: noWrapperBlock.write_metadata === true } : null,
    }
  }
  return {
    name,
    topic,
    ackDeadlineSeconds: ack === undefined ? 10 : num(ack, `${where}.ack_deadline_seconds`),
    retryPolicy: retry
      ? {
          minimumBackoff: str(retry.minimum_backoff ?? '10s', `${where}.retry_policy.minimum_backoff`),
          maximumBackoff: str(retry.maximum_backoff ?? '600s', `${where}.retry_policy.maximum_backoff`),
        }
      : null,
    deadLetterPolicy: dead
      ? {
          deadLetterTopic: str(dead.dead_letter_topic ?? null, `${where}.dead_letter_policy.dead_letter_topic`).replace(/^projects\/[^/]+\/topics\//, ''),
          maxDeliveryAttempts:
            dead.max_delivery_attempts === undefined ? 5 : num(dead.max_delivery_attempts, `${where}.dead_letter_policy.max_delivery_attempts`),
        }
      : null,
    messageRetentionDuration: retention === undefined ? null : str(retention, `${where}.message_retention_duration`),
    push: pushShape,
    replacesBigQuery: bigquery !== null,
  }
}

function queueShape(attrs: LazyObject, where: string): QueueShape {
  const rate = block(attrs, 'rate_limits', where)
  const retry = block(attrs, 'retry_config', where)
  return {
    name: str(attrs.get('name'), `${where}.name`),
    location: str(attrs.get('location'), `${where}.location`),
    rateLimits: rate
      ? {
          maxDispatchesPerSecond: num(rate.max_dispatches_per_second ?? 500, `${where}.rate_limits.max_dispatches_per_second`),
          maxConcurrentDispatches: num(rate.max_concurrent_dispatches ?? 1000, `${where}.rate_limits.max_concurrent_dispatches`),
        }
      : null,
    retryConfig: retry
      ? {
          maxAttempts: num(retry.max_attempts ?? 100, `${where}.retry_config.max_attempts`),
          minBackoffSeconds: seconds(str(retry.min_backoff ?? '0.1s', `${where}.retry_config.min_backoff`), `${where}.retry_config.min_backoff`),
          maxBackoffSeconds: seconds(str(retry.max_backoff ?? '3600s', `${where}.retry_config.max_backoff`), `${where}.retry_config.max_backoff`),
          maxDoublings: num(retry.max_doublings ?? 16, `${where}.retry_config.max_doublings`),
        }
      : null,
  }
}

/** IAM member resources, as (member, role, resource) triples the stand-ins check. */
function grants(tf: TerraformModule, project: string): Grant[] {
  for (const type of [
    'google_project_iam_binding',
    'google_project_iam_policy',
    'google_secret_manager_secret_iam_binding',
    'google_secret_manager_secret_iam_policy',
    'google_service_account_iam_binding',
    'google_service_account_iam_policy',
    'google_cloud_tasks_queue_iam_binding',
    'google_cloud_tasks_queue_iam_policy',
    'google_cloud_run_v2_service_iam_binding',
    'google_cloud_run_v2_service_iam_policy',
    'google_cloud_run_service_iam_member',
    'google_cloud_run_service_iam_binding',
    'google_cloud_run_service_iam_policy',
  ]) {
    if (tf.resources(type).length > 0)
      throw new HclError(`${type}: start:cloud reads IAM grants from *_iam_member resources only; teach scripts/lib/cloud/deployed-shape.ts`)
  }
  const out: Grant[] = []
  const kinds: Array<{ type: string; resource: (a: LazyObject, where: string) => string }> = [
    { type: 'google_project_iam_member', resource: () => 'project' },
    {
      type: 'google_secret_manager_secret_iam_member',
      resource: (a, w) => str(a.get('secret_id'), `${w}.secret_id`).replace(/^projects\/[^/]+\/secrets\//, 'secret:'),
    },
    {
      type: 'google_service_account_iam_member',
      resource: (a, w) => `serviceAccount:${str(a.get('service_account_id'), `${w}.service_account_id`).replace(/^projects\/[^/]+\/serviceAccounts\//, '')}`,
    },
    { type: 'google_cloud_tasks_queue_iam_member', resource: (a, w) => `queue:${str(a.get('name'), `${w}.name`).replace(/^.*\/queues\//, '')}` },
    // who may invoke a Cloud Run service (the push relay and the Cloud Tasks stand-in check it)
    { type: 'google_cloud_run_v2_service_iam_member', resource: (a, w) => cloudRunResource(str(a.get('name'), `${w}.name`).replace(/^.*\/services\//, '')) },
  ]
  for (const { type, resource } of kinds) {
    for (const r of tf.resources(type)) {
      for (const { key, attrs } of r.instances()) {
        const where = `${type}.${r.name}${key === null ? '' : `[${JSON.stringify(key)}]`}`
        if (type === 'google_project_iam_member') {
          const p = optional(attrs, 'project')
          if (p !== undefined && p !== project) continue
        }
        const condition = block(attrs, 'condition', where)
        out.push({
          member: str(attrs.get('member'), `${where}.member`),
          role: str(attrs.get('role'), `${where}.role`),
          resource: resource(attrs, where),
          ...(condition ? { condition: `${where}: ${String(condition.expression ?? '')}` } : {}),
        })
      }
    }
  }
  // A service with invoker_iam_disabled skips Cloud Run's invoker check: anyone may call it, as
  // an allUsers grant would allow (which Domain Restricted Sharing refuses; infra/cloud-run.tf).
  for (const r of tf.resources('google_cloud_run_v2_service')) {
    for (const { key, attrs } of r.instances()) {
      if (optional(attrs, 'invoker_iam_disabled') !== true) continue
      const where = `google_cloud_run_v2_service.${r.name}${key === null ? '' : `[${JSON.stringify(key)}]`}`
      out.push({ member: 'allUsers', role: 'roles/run.invoker', resource: cloudRunResource(str(attrs.get('name'), `${where}.name`)) })
    }
  }
  return out
}

/** Reads infra/ and returns the deployed shape as it runs on this machine. */
export async function readDeployedShape(local: LocalSettings): Promise<DeployedShape> {
  const urls = Object.fromEntries(SERVICE_NAMES.map((n) => [n, `http://127.0.0.1:${local.ports[n]}`])) as Record<CloudServiceName, string>
  const tf = await loadTerraform(local.infraDir, {
    variables: {
      project_id: local.project,
      edge_domain: local.edgeDomain,
      portal_domain: new URL(local.portalBaseUrl).host,
      ...(local.operatorEventsUrl ? { operator_events_url: local.operatorEventsUrl } : {}),
      // alert emails as files in each service's DATA_DIR/alert-mail (LOCAL_WIRING admits the file sink)
      tenant_alert_email: 'file',
    },
    // the Cloud Run URLs and the portal origin are this machine's
    overrides: { service_url: urls, portal_base_url: local.portalBaseUrl },
    projectNumber: FAKE_PROJECT_NUMBER,
    serviceUri: (name) => {
      if (!(SERVICE_NAMES as readonly string[]).includes(name)) throw new HclError(`no local service named ${name}`)
      return urls[name as CloudServiceName]
    },
  })
  const region = str(tf.variable('region'), 'var.region')

  const serviceEnv = tf.local('service_env')
  const secretEnv = tf.local('service_secret_env')
  if (!isPlainObject(serviceEnv) || !isPlainObject(secretEnv)) throw new HclError('local.service_env and local.service_secret_env must be objects')
  const declared = Object.keys(serviceEnv).sort()
  if (declared.join() !== [...SERVICE_NAMES].sort().join()) {
    throw new HclError(`local.service_env declares ${declared.join(', ')}; start:cloud runs exactly ${SERVICE_NAMES.join(', ')}`)
  }
  const accounts = new Map<string, string>()
  for (const r of tf.resources('google_service_account')) {
    for (const { attrs } of r.instances()) accounts.set(str(attrs.get('account_id'), 'account_id'), str(attrs.get('email'), 'email'))
  }
  const runtimeAccounts = tf.local('sa')

  const services: ServiceShape[] = SERVICE_NAMES.map((name) => {
    const rawEnv = serviceEnv[name]!
    if (!isPlainObject(rawEnv)) throw new HclError(`local.service_env["${name}"] is not an object`)
    const env: Record<string, string> = {}
    for (const [k, v] of Object.entries(rawEnv)) env[k] = envValue(v, `local.service_env["${name}"].${k}`)
    // the public origins a browser or curl uses here (the Cloud Run URLs were replaced above);
    // these are this machine's settings, so only the other values are checked for Google URLs
    const publicOrigins: Record<string, string> = {
      EDGE_DOMAIN: local.edgeDomain,
      EDGE_BASE_URL_TEMPLATE: local.edgeBaseUrlTemplate,
      PORTAL_BASE_URL: local.portalBaseUrl,
    }
    for (const [k, v] of Object.entries(publicOrigins)) if (k in env) env[k] = v
    for (const [k, v] of Object.entries(env)) {
      if (!(k in publicOrigins) && /\.run\.app\b|^https:\/\//.test(v))
        throw new HclError(`local.service_env["${name}"].${k} = "${v}" points into Google Cloud; start:cloud cannot translate it to this machine`)
    }
    const rawSecrets = secretEnv[name] ?? {}
    if (!isPlainObject(rawSecrets)) throw new HclError(`local.service_secret_env["${name}"] is not an object`)
    const secrets: Record<string, string> = {}
    for (const [k, v] of Object.entries(rawSecrets)) secrets[k] = str(v, `local.service_secret_env["${name}"].${k}`)
    const account = isPlainObject(runtimeAccounts) && typeof runtimeAccounts[name] === 'string' ? runtimeAccounts[name] : accounts.get(name)
    if (!account) throw new HclError(`no service account for ${name} in infra/service-accounts.tf`)
    return { name, port: local.ports[name], url: urls[name], serviceAccount: account, env, secretEnv: secrets }
  })

  const topics: string[] = []
  for (const r of tf.resources('google_pubsub_topic'))
    for (const { attrs } of r.instances()) topics.push(str(attrs.get('name'), `google_pubsub_topic.${r.name}.name`))

  const subscriptions: SubscriptionShape[] = []
  for (const r of tf.resources('google_pubsub_subscription')) {
    for (const { key, attrs } of r.instances()) {
      const where = `google_pubsub_subscription.${r.name}${key === null ? '' : `[${JSON.stringify(key)}]`}`
      subscriptions.push(subscriptionShape(tf.rawBody(r.type, r.name), attrs, where, Object.values(urls)))
    }
  }

  const secrets: string[] = []
  for (const r of tf.resources('google_secret_manager_secret')) for (const { attrs } of r.instances()) secrets.push(str(attrs.get('secret_id'), 'secret_id'))

  const queues: QueueShape[] = []
  for (const r of tf.resources('google_cloud_tasks_queue')) {
    for (const { key, attrs } of r.instances())
      queues.push(queueShape(attrs, `google_cloud_tasks_queue.${r.name}${key === null ? '' : `[${JSON.stringify(key)}]`}`))
  }

  const customRoles: Record<string, string[]> = {}
  for (const r of tf.resources('google_project_iam_custom_role')) {
    for (const { attrs } of r.instances()) {
      const permissions = attrs.get('permissions')
      if (!Array.isArray(permissions)) throw new HclError(`google_project_iam_custom_role.${r.name}.permissions is not a list`)
      customRoles[`projects/${local.project}/roles/${str(attrs.get('role_id'), 'role_id')}`] = permissions.map((p) => str(p, 'permission'))
    }
  }

  return { project: local.project, region, services, topics, subscriptions, secrets, queues, grants: grants(tf, local.project), customRoles }
}
