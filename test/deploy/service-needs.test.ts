import { describe, expect, it } from 'vitest'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { annotationsOf, VARIABLE_NAMES, type VariableName } from '@lsv/shared/config/environment.ts'
import { SERVICE_NAMES, SERVICE_NEEDS, type Backend, type ServiceName } from '@lsv/shared/config/services.ts'
import { loadTerraform, type Terraform } from '../infra/hcl.ts'

/**
 * infra/service-env.tf gives each service exactly what shared/src/config/services.ts says its code
 * uses: the production backend of each backend it uses (and no variable for one it does not), the
 * push identity where it has /pubsub/* routes, the tasks identity and DISPATCHER_URL where it
 * creates or receives tasks, and only the secrets it reads from the environment. The environment
 * then passes loadConfig(env, service) in production.
 */

/** one `KEY = expression` entry of an object, the expression as Terraform source */
type Entries = Record<string, string>

/** Splits an HCL object body (`{ K = v \n … }`, comments allowed) into its entries. */
function objectEntries(body: string): Entries {
  const out: Entries = {}
  for (const line of body.split('\n')) {
    const m = /^\s*([A-Z][A-Z0-9_]*)\s*=\s*(.+?)\s*$/.exec(line)
    if (m) out[m[1]!] = m[2]!
  }
  return out
}

/** Index of the `}` closing the object that `text` opens, skipping quoted strings (and their `${…}`). */
function closingBrace(text: string): number {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
    } else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return i
  }
  throw new Error(`unbalanced object: ${text.slice(0, 60)}`)
}

const unwrap = (v: string) => /^\$\{(.*)\}$/s.exec(v)?.[1] ?? JSON.stringify(v)

/**
 * local.service_env[service] as `KEY → expression`: `merge(local.a, local.b, { … })` with the
 * locals' entries resolved. Any other shape fails, naming it: the test must not guess.
 */
function serviceEnv(tf: Terraform, service: ServiceName): Entries {
  const locals = Object.assign({}, ...tf.locals) as Record<string, unknown>
  const raw = (locals.service_env as Record<string, unknown>)[service]
  const expr = typeof raw === 'string' ? /^\$\{merge\((.*)\)\}$/s.exec(raw)?.[1] : null
  if (!expr) throw new Error(`service_env["${service}"] is not merge(...): ${JSON.stringify(raw)}`)
  const out: Entries = {}
  let rest = expr.trim()
  while (rest) {
    const ref = /^local\.([a-z_]+)\s*(,|$)/.exec(rest)
    if (ref) {
      const value = locals[ref[1]!]
      if (typeof value !== 'object' || value === null) throw new Error(`local.${ref[1]} is not an object`)
      for (const [k, v] of Object.entries(value)) out[k] = unwrap(String(v))
      rest = rest.slice(ref[0].length).trim()
      continue
    }
    if (rest.startsWith('{')) {
      const end = closingBrace(rest)
      Object.assign(out, objectEntries(rest.slice(1, end)))
      rest = rest
        .slice(end + 1)
        .trim()
        .replace(/^,/, '')
        .trim()
      continue
    }
    throw new Error(`service_env["${service}"]: cannot read ${rest.slice(0, 60)}`)
  }
  return out
}

const BACKEND_ENV: Record<Backend, [string, string]> = {
  store: ['STORE_BACKEND', 'firestore'],
  queue: ['QUEUE_BACKEND', 'pubsub'],
  tasks: ['TASKS_BACKEND', 'cloudtasks'],
  secrets: ['SECRETS_BACKEND', 'secretmanager'],
}
const PUSH_SA = 'google_service_account.pubsub_push.email'
const TASKS_SA = 'google_service_account.tasks_invoker.email'
const DISPATCHER = 'local.service_url["webhook-dispatcher"]'

/** A plausible value for a Terraform expression, to run loadConfig on the declared environment. */
function sample(key: string, expression: string): string {
  const literal = /^"([^"$]*)"$/.exec(expression)
  if (literal) return literal[1]!
  if (expression.endsWith('.email')) return `${expression.split('.')[1]}@lsv-prod.iam.gserviceaccount.com`
  if (expression.startsWith('local.service_url')) return `https://${/"([^"]+)"/.exec(expression)![1]}-123456.europe-west1.run.app`
  const samples: Record<string, string> = {
    GOOGLE_CLOUD_PROJECT: 'lsv-prod',
    GOOGLE_CLOUD_REGION: 'europe-west1',
    EDGE_DOMAIN: 'edge.example.com',
    PARTNERCRM_TOKEN_CUTOVER: '',
    OPERATOR_EVENTS_URL: 'https://ops.example.com/events',
    PORTAL_BASE_URL: 'https://portal.example.com',
    EDGE_BASE_URL_TEMPLATE: 'https://{public_id}.edge.example.com',
    WEBHOOK_ENDPOINT_RATE: '100',
    TASK_QUEUE_DEDICATED_LIMIT: '900',
    TASK_QUEUE_POOL_SIZE: '32',
    // alert emails on, through a relay: the strictest production settings
    ALERT_EMAIL: 'smtp',
    ALERT_EMAIL_FROM: 'alerts@example.com',
  }
  if (key in samples) return samples[key]!
  throw new Error(`no sample for ${key} = ${expression}`)
}

describe('infra/service-env.tf against shared/src/config/services.ts', () => {
  for (const service of SERVICE_NAMES) {
    it(`${service}: the environment it gets is what its code uses`, async () => {
      const tf = await loadTerraform()
      const env = serviceEnv(tf, service)
      const needs = SERVICE_NEEDS[service]
      expect(env.NODE_ENV).toBe('"production"')
      for (const [backend, [variable, value]] of Object.entries(BACKEND_ENV) as Array<[Backend, [string, string]]>) {
        expect({ variable, value: env[variable] }).toEqual({ variable, value: needs.backends.includes(backend) ? `"${value}"` : undefined })
      }
      if (needs.pushRoutes) {
        expect(env.PUSH_AUDIENCE).toBe(`local.service_url["${service}"]`)
        expect(env.PUSH_SERVICE_ACCOUNT).toBe(PUSH_SA)
      } else {
        expect([env.PUSH_AUDIENCE, env.PUSH_SERVICE_ACCOUNT]).toEqual([undefined, undefined])
      }
      if (needs.taskRoute || needs.createsTasks) {
        expect(env.DISPATCHER_URL).toBe(DISPATCHER)
        expect(env.TASKS_SERVICE_ACCOUNT).toBe(TASKS_SA)
      } else {
        expect([env.DISPATCHER_URL, env.TASKS_SERVICE_ACCOUNT]).toEqual([undefined, undefined])
      }
      expect(env.WEBHOOK_ENDPOINT_RATE).toBe(needs.createsTasks ? 'var.webhook_endpoint_rate' : undefined)
      for (const name of ['PORTAL_BASE_URL', 'EDGE_BASE_URL_TEMPLATE'] as const) {
        expect({ name, set: env[name] !== undefined }).toEqual({ name, set: needs.publicOrigins.includes(name) })
      }
      // the configuration schema names this service among the readers of every variable it gets
      for (const name of Object.keys(env)) {
        expect({ name, known: (VARIABLE_NAMES as string[]).includes(name) }).toEqual({ name, known: true })
        expect({ name, readers: annotationsOf(name as VariableName)['x-readers'] }).toEqual({ name, readers: expect.arrayContaining([service]) })
      }
      const secrets = (Object.assign({}, ...tf.locals).service_secret_env as Record<string, Record<string, string>>)[service]
      expect(Object.keys(secrets ?? {}).sort()).toEqual([...needs.envSecrets].sort())

      // and the service starts on it in production (values sampled for the references)
      const values = Object.fromEntries(Object.entries(env).map(([k, e]) => [k, sample(k, e)]))
      // what each secret holds once provisioned (the SMTP relay: a URL, as an operator adds it)
      for (const name of needs.envSecrets) values[name] = name === 'ALERT_SMTP_URL' ? 'smtps://apikey:key@smtp.example.com:465' : 'from-secret-manager'
      // Cloud Run sets K_SERVICE on every instance (INTERNAL_AUTH=front-end is refused without it)
      values.K_SERVICE = service
      expect(() => loadConfig(values, service)).not.toThrow()
    })
  }

  it('Pub/Sub push presents the identity and audience the push routes check', async () => {
    const tf = await loadTerraform()
    const subs = Object.values(tf.resource.google_pubsub_subscription ?? {}).flat()
    const pushes = subs.flatMap((s) => (s.push_config as Array<Record<string, unknown>> | undefined) ?? [])
    expect(pushes.length).toBeGreaterThan(0)
    for (const push of pushes) {
      const oidc = (push.oidc_token as Array<Record<string, string>>)[0]!
      expect(oidc.service_account_email).toBe(`\${${PUSH_SA}}`)
      // the audience is the Cloud Run URL of the service the push goes to, i.e. its PUSH_AUDIENCE
      expect(String(push.push_endpoint).startsWith(oidc.audience!.replace(/\}$/, ''))).toBe(true)
    }
  })
})
