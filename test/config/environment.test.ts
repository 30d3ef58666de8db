import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, type PlatformConfig } from '@lsv/shared/config/config.ts'
import { annotationsOf, LOCAL_WIRING_VARIABLES, readEnvironment, VARIABLE_NAMES, type VariableName } from '@lsv/shared/config/environment.ts'
import { SERVICE_NAMES, SERVICE_NEEDS, type ServiceName } from '@lsv/shared/config/services.ts'

/**
 * The environment schema (shared/src/config/environment.ts): every variable's form, decoding and
 * default, and the rules loadConfig adds on top (public origins in production, Google selections
 * carrying what they need). The production rules per service are in test/deploy/production-config.test.ts.
 */

type Env = Record<string, string>

function errorOf(run: () => unknown): ConfigError | null {
  try {
    run()
    return null
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
}

/** A value of each variable's form and what it decodes to, and (where one exists) a value outside it. */
const FORMS: Record<VariableName, { good: string; decoded: unknown; bad?: string }> = {
  NODE_ENV: { good: 'production', decoded: 'production', bad: 'prod' },
  LOG_LEVEL: { good: 'debug', decoded: 'debug', bad: 'verbose' },
  TRACE_EXPORTER: { good: 'otlp', decoded: 'otlp', bad: 'jaeger' },
  TRACE_SAMPLE_RATIO: { good: '0.25', decoded: 0.25, bad: '1.5' },
  TRACE_REFUSED_REQUESTS: { good: 'TRUE', decoded: true, bad: 'sometimes' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { good: 'http://127.0.0.1:4318/', decoded: 'http://127.0.0.1:4318', bad: '127.0.0.1:4318' },
  DATA_DIR: { good: '/var/lib/lsv', decoded: '/var/lib/lsv' },
  STORE_BACKEND: { good: 'firestore', decoded: 'firestore', bad: 'sqlite' },
  QUEUE_BACKEND: { good: 'pubsub', decoded: 'pubsub', bad: 'kafka' },
  TASKS_BACKEND: { good: 'cloudtasks', decoded: 'cloudtasks', bad: 'celery' },
  // `env` was once accepted and meant the same files as `embedded`: gone
  SECRETS_BACKEND: { good: 'secretmanager', decoded: 'secretmanager', bad: 'env' },
  GOOGLE_CLOUD_PROJECT: { good: 'lsv-prod', decoded: 'lsv-prod', bad: 'LSV_Prod' },
  GOOGLE_CLOUD_REGION: { good: 'us-central1', decoded: 'us-central1', bad: 'mars' },
  EDGE_DOMAIN: { good: 'edge.example.com', decoded: 'edge.example.com', bad: 'Edge_Example' },
  EDGE_BASE_URL_TEMPLATE: {
    good: 'https://{public_id}.edge.example.com/',
    decoded: 'https://{public_id}.edge.example.com',
    bad: 'ftp://{public_id}.edge.example.com',
  },
  PORTAL_BASE_URL: { good: 'https://portal.example.com//', decoded: 'https://portal.example.com', bad: 'portal.example.com' },
  OPERATOR_TOKEN: { good: 'op-token', decoded: 'op-token' },
  KEY_PEPPER: { good: 'pepper', decoded: 'pepper' },
  PARTNERCRM_TOKEN_CUTOVER: { good: '2026-10-01T00:00:00Z', decoded: new Date('2026-10-01T00:00:00Z'), bad: 'next tuesday' },
  OPERATOR_EVENTS_URL: { good: 'https://ops.example.com/events', decoded: 'https://ops.example.com/events', bad: 'ops.example.com' },
  OPERATOR_EVENTS_SECRET: { good: 'whsec_c2VjcmV0', decoded: 'whsec_c2VjcmV0' },
  ALERT_EMAIL: { good: 'smtp', decoded: 'smtp', bad: 'sendmail' },
  ALERT_MAIL_DIR: { good: '/var/lib/lsv/mail', decoded: '/var/lib/lsv/mail' },
  ALERT_SMTP_URL: { good: 'smtps://apikey:k@smtp.sendgrid.net:465', decoded: 'smtps://apikey:k@smtp.sendgrid.net:465', bad: 'https://smtp.sendgrid.net' },
  ALERT_EMAIL_FROM: { good: 'alerts@example.com', decoded: 'alerts@example.com', bad: 'alerts' },
  WEBHOOK_ENDPOINT_RATE: { good: '2.5', decoded: 2.5, bad: '0' },
  TASK_QUEUE_DEDICATED_LIMIT: { good: '0', decoded: 0, bad: '1.5' },
  TASK_QUEUE_POOL_SIZE: { good: '64', decoded: 64, bad: '0' },
  TRUSTED_PROXY_HOPS: { good: '10', decoded: 10, bad: '11' },
  EDGE_DEPENDENCY_DEADLINE_MS: { good: '2500', decoded: 2500, bad: '99' },
  PUSH_AUDIENCE: { good: 'https://upsert-worker-1.run.app', decoded: 'https://upsert-worker-1.run.app' },
  PUSH_SERVICE_ACCOUNT: { good: 'push@p.iam.gserviceaccount.com', decoded: 'push@p.iam.gserviceaccount.com', bad: 'push' },
  DISPATCHER_URL: { good: 'https://d.example/', decoded: 'https://d.example', bad: 'd.example' },
  TASKS_SERVICE_ACCOUNT: { good: 'tasks@p.iam.gserviceaccount.com', decoded: 'tasks@p.iam.gserviceaccount.com', bad: 'tasks@' },
  INTERNAL_AUTH: { good: 'front-end', decoded: 'front-end', bad: 'none' },
  LOCAL_WIRING: { good: 'TRUE', decoded: true, bad: 'maybe' },
  K_SERVICE: { good: 'edge-ingest', decoded: 'edge-ingest' },
  ALLOW_LOOPBACK_WEBHOOKS: { good: 'No', decoded: false, bad: '2' },
  FIRESTORE_EMULATOR_HOST: { good: '127.0.0.1:8085', decoded: '127.0.0.1:8085', bad: '127.0.0.1' },
  PUBSUB_EMULATOR_HOST: { good: '[::1]:8086', decoded: '[::1]:8086', bad: 'http://127.0.0.1:8086' },
  CLOUD_TASKS_EMULATOR_HOST: { good: 'localhost:1', decoded: 'localhost:1', bad: 'localhost:' },
  SECRET_MANAGER_EMULATOR_HOST: { good: 'localhost:1', decoded: 'localhost:1', bad: ':1' },
  // kept exactly as written: an issuer is compared byte for byte
  OIDC_ISSUER: { good: 'http://127.0.0.1:1/', decoded: 'http://127.0.0.1:1/', bad: 'issuer' },
  OIDC_JWKS_URL: { good: 'http://127.0.0.1:1/jwks', decoded: 'http://127.0.0.1:1/jwks', bad: '/jwks' },
  LOCAL_FRONT_END_SECRET: { good: 'a'.repeat(43), decoded: 'a'.repeat(43), bad: 'too-short' },
  PUBSUB_NAME_PREFIX: { good: 'local-ab12-', decoded: 'local-ab12-', bad: 'a/b' },
  LISTEN_HOST: { good: '::', decoded: '::', bad: 'localhost' },
  PORT: { good: '0', decoded: 0, bad: '65536' },
  EDGE_PORT: { good: '65535', decoded: 65535, bad: '-1' },
  PORTAL_PORT: { good: '80', decoded: 80, bad: 'http' },
  UPSERT_WORKER_PORT: { good: '8082', decoded: 8082, bad: '80.5' },
  WEBHOOK_DISPATCHER_PORT: { good: '8083', decoded: 8083, bad: '1e3' },
}

describe('each variable has a form, checked once and decoded', () => {
  it.each(VARIABLE_NAMES)('%s', (name) => {
    const { good, decoded, bad } = FORMS[name]
    expect(readEnvironment({ [name]: good })[name]).toEqual(decoded)
    if (bad === undefined) return
    const err = errorOf(() => readEnvironment({ [name]: bad }))
    expect({ variable: err?.variable, message: err?.message }).toEqual({
      variable: name,
      message: `configuration error: ${name} must be ${annotationsOf(name)['x-form']} (got "${bad}")`,
    })
  })

  it('every variable says what it means and who reads it', () => {
    for (const name of VARIABLE_NAMES) {
      const a = annotationsOf(name)
      expect({ name, described: a.description.length > 10, readers: a['x-readers'].length > 0 }).toEqual({ name, described: true, readers: true })
    }
    expect([...LOCAL_WIRING_VARIABLES].sort()).toEqual([
      'ALLOW_LOOPBACK_WEBHOOKS',
      'CLOUD_TASKS_EMULATOR_HOST',
      'FIRESTORE_EMULATOR_HOST',
      'LOCAL_FRONT_END_SECRET',
      'OIDC_ISSUER',
      'OIDC_JWKS_URL',
      'PUBSUB_EMULATOR_HOST',
      'SECRET_MANAGER_EMULATOR_HOST',
    ])
  })

  it('booleans in any case; unset and empty are the same; unknown variables are ignored', () => {
    for (const raw of ['1', 'true', 'TRUE', 'yes', 'Yes']) expect(readEnvironment({ LOCAL_WIRING: raw }).LOCAL_WIRING, raw).toBe(true)
    for (const raw of ['0', 'false', 'False', 'no', 'NO']) expect(readEnvironment({ LOCAL_WIRING: raw }).LOCAL_WIRING, raw).toBe(false)
    expect(readEnvironment({ WEBHOOK_ENDPOINT_RATE: '', TRUSTED_PROXY_HOPS: '' })).toMatchObject({ WEBHOOK_ENDPOINT_RATE: 100, TRUSTED_PROXY_HOPS: 0 })
    expect(readEnvironment({ SOMETHING_ELSE: 'x' })).not.toHaveProperty('SOMETHING_ELSE')
  })

  it('the defaults: static ones from the schema, the computed ones from other variables', () => {
    const dev = loadConfig({})
    expect(dev).toMatchObject({
      nodeEnv: 'development',
      logLevel: 'info',
      dataDir: '.data',
      storeBackend: 'embedded',
      queueBackend: 'embedded',
      tasksBackend: 'embedded',
      secretsBackend: 'embedded',
      gcpProject: null,
      gcpRegion: 'europe-west1',
      edgeDomain: 'edge.localhost',
      portalBaseUrl: 'http://localhost:8081',
      edgeBaseUrlTemplate: 'http://{public_id}.edge.localhost:8080',
      webhookEndpointRate: 100,
      trustedProxyHops: 0,
      allowLoopbackWebhooks: false,
      localWiring: false,
      pubsubNamePrefix: null,
      partnerCrmTokenCutover: null,
    })
    expect(loadConfig({ NODE_ENV: 'test' }).logLevel).toBe('silent')
    expect(loadConfig({ PORTAL_PORT: '9001', EDGE_PORT: '9000', EDGE_DOMAIN: 'edge.test' })).toMatchObject({
      portalBaseUrl: 'http://localhost:9001',
      edgeBaseUrlTemplate: 'http://{public_id}.edge.test:9000',
    })
    expect(loadConfig({ FIRESTORE_EMULATOR_HOST: '127.0.0.1:1', PUBSUB_EMULATOR_HOST: '127.0.0.1:2', GOOGLE_CLOUD_PROJECT: 'demo-x1' })).toMatchObject({
      storeBackend: 'firestore',
      queueBackend: 'pubsub',
      gcpProject: 'demo-x1',
    })
  })
})

describe('public origins in production', () => {
  const production: Env = {
    NODE_ENV: 'production',
    GOOGLE_CLOUD_PROJECT: 'lsv-prod',
    STORE_BACKEND: 'firestore',
    QUEUE_BACKEND: 'pubsub',
    TASKS_BACKEND: 'cloudtasks',
    SECRETS_BACKEND: 'secretmanager',
    DISPATCHER_URL: 'https://d.example',
    TASKS_SERVICE_ACCOUNT: 't@p.iam.gserviceaccount.com',
    PUSH_AUDIENCE: 'https://w.example',
    PUSH_SERVICE_ACCOUNT: 'p@p.iam.gserviceaccount.com',
  }
  const origins: Env = { PORTAL_BASE_URL: 'https://portal.example.com', EDGE_BASE_URL_TEMPLATE: 'https://{public_id}.edge.example.com' }
  const expected: Record<ServiceName, string[]> = {
    'edge-ingest': [],
    'portal-api': ['PORTAL_BASE_URL', 'EDGE_BASE_URL_TEMPLATE'],
    'upsert-worker': [],
    'webhook-dispatcher': ['PORTAL_BASE_URL'],
  }

  it.each(SERVICE_NAMES)('%s: each public origin it hands out must be set, the others need not be', (service) => {
    expect([...SERVICE_NEEDS[service].publicOrigins]).toEqual(expected[service])
    expect(loadConfig({ ...production, ...origins }, service)).toMatchObject({
      portalBaseUrl: origins.PORTAL_BASE_URL,
      edgeBaseUrlTemplate: origins.EDGE_BASE_URL_TEMPLATE,
    })
    for (const name of Object.keys(origins)) {
      const rest = Object.fromEntries(Object.entries(origins).filter(([k]) => k !== name))
      const err = errorOf(() => loadConfig({ ...production, ...rest }, service))
      if (expected[service].includes(name)) {
        expect({ variable: err?.variable, message: err?.message }).toEqual({
          variable: name,
          message: expect.stringMatching(new RegExp(`${name} is required in production: ${service} writes it into`)),
        })
      } else {
        expect(err).toBeNull()
      }
    }
  })

  it('a process that is every service needs both; outside production the localhost defaults serve', () => {
    expect(errorOf(() => loadConfig({ ...production, EDGE_BASE_URL_TEMPLATE: origins.EDGE_BASE_URL_TEMPLATE! }, null))?.variable).toBe('PORTAL_BASE_URL')
    expect(errorOf(() => loadConfig({ ...production, PORTAL_BASE_URL: origins.PORTAL_BASE_URL! }, null))?.variable).toBe('EDGE_BASE_URL_TEMPLATE')
    expect(loadConfig({ ...production, NODE_ENV: 'development' }, 'portal-api')).toMatchObject({
      portalBaseUrl: 'http://localhost:8081',
      edgeBaseUrlTemplate: 'http://{public_id}.edge.localhost:8080',
    })
  })
})

describe('a Google selection carries what it needs, used by this service or not', () => {
  it('Cloud Tasks without its target or identity, a Google backend without the project: refused naming the variable', () => {
    expect(errorOf(() => loadConfig({ TASKS_BACKEND: 'cloudtasks', GOOGLE_CLOUD_PROJECT: 'lsv-dev' }, 'upsert-worker'))?.variable).toBe('DISPATCHER_URL')
    expect(
      errorOf(() =>
        loadConfig(
          { TASKS_BACKEND: 'cloudtasks', GOOGLE_CLOUD_PROJECT: 'lsv-dev', DISPATCHER_URL: 'https://d.example', TASKS_SERVICE_ACCOUNT: 't@x.io' },
          'edge-ingest',
        ),
      ),
    ).toBeNull()
    for (const env of [{ SECRETS_BACKEND: 'secretmanager' }, { STORE_BACKEND: 'firestore' }, { QUEUE_BACKEND: 'pubsub' }]) {
      expect(errorOf(() => loadConfig(env, 'upsert-worker'))?.message).toBe(
        'configuration error: GOOGLE_CLOUD_PROJECT is required when a Google Cloud backend is selected',
      )
    }
    const tasks = { TASKS_BACKEND: 'cloudtasks', DISPATCHER_URL: 'https://d.example', TASKS_SERVICE_ACCOUNT: 't@x.io' }
    expect(errorOf(() => loadConfig(tasks, 'webhook-dispatcher'))?.variable).toBe('GOOGLE_CLOUD_PROJECT')
    expect(errorOf(() => loadConfig({ ...tasks, GOOGLE_CLOUD_PROJECT: 'lsv-dev', WEBHOOK_ENDPOINT_RATE: '501' }, 'webhook-dispatcher'))?.variable).toBe(
      'WEBHOOK_ENDPOINT_RATE',
    )
  })

  it('the type says so: after narrowing on the backend, no `!` is needed (checked by tsc)', () => {
    const config: PlatformConfig = loadConfig(
      {
        TASKS_BACKEND: 'cloudtasks',
        SECRETS_BACKEND: 'secretmanager',
        GOOGLE_CLOUD_PROJECT: 'lsv-dev',
        DISPATCHER_URL: 'https://d.example/',
        TASKS_SERVICE_ACCOUNT: 't@x.io',
      },
      'webhook-dispatcher',
    )
    // @ts-expect-error without narrowing the project may be null
    const unproven: string = config.gcpProject
    expect(unproven).toBe('lsv-dev')
    if (config.tasksBackend !== 'cloudtasks' || config.secretsBackend !== 'secretmanager') throw new Error('expected Google tasks and secrets')
    const proven: [string, string, string] = [config.gcpProject, config.dispatcherUrl, config.tasksServiceAccount]
    expect(proven).toEqual(['lsv-dev', 'https://d.example', 't@x.io'])
  })
})
