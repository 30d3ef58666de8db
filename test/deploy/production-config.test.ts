import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { ConfigError, LOCAL_WIRING_VARIABLES, loadConfig } from '@lsv/shared/config/config.ts'
import { SERVICE_NAMES, type ServiceName } from '@lsv/shared/config/services.ts'

/**
 * Production configuration (NODE_ENV=production): each service starts with what Terraform gives
 * it, and stops at start-up, naming the variable, when an audience or identity its routes verify
 * or its tasks carry is missing, when a backend it uses would be embedded, or when local-only
 * wiring appears without LOCAL_WIRING (which is itself refused on Cloud Run and admits only loopback).
 */
const ROOT = join(import.meta.dirname, '..', '..')
const PUSH_SA = 'pubsub-push@lsv-prod.iam.gserviceaccount.com'
const TASKS_SA = 'tasks-invoker@lsv-prod.iam.gserviceaccount.com'
const url = (s: string) => `https://${s}-123456.europe-west1.run.app`

type Env = Record<string, string>
const common: Env = { NODE_ENV: 'production', GOOGLE_CLOUD_PROJECT: 'lsv-prod', STORE_BACKEND: 'firestore', QUEUE_BACKEND: 'pubsub', LOG_LEVEL: 'info' }
const taskCreator: Env = {
  TASKS_BACKEND: 'cloudtasks',
  GOOGLE_CLOUD_REGION: 'europe-west1',
  DISPATCHER_URL: url('webhook-dispatcher'),
  TASKS_SERVICE_ACCOUNT: TASKS_SA,
  WEBHOOK_ENDPOINT_RATE: '100',
}
/** the shape infra/service-env.tf gives each service (test/deploy/service-needs.test.ts checks the file) */
const DEPLOYED: Record<ServiceName, Env> = {
  'edge-ingest': { ...common, SECRETS_BACKEND: 'secretmanager', EDGE_DOMAIN: 'edge.example.com', KEY_PEPPER: 'p' },
  'portal-api': {
    ...common,
    ...taskCreator,
    SECRETS_BACKEND: 'secretmanager',
    PORTAL_BASE_URL: 'https://portal.example.com',
    EDGE_BASE_URL_TEMPLATE: 'https://{public_id}.edge.example.com',
    KEY_PEPPER: 'p',
    OPERATOR_TOKEN: 'o',
  },
  'upsert-worker': { ...common, PUSH_AUDIENCE: url('upsert-worker'), PUSH_SERVICE_ACCOUNT: PUSH_SA },
  'webhook-dispatcher': {
    ...common,
    ...taskCreator,
    SECRETS_BACKEND: 'secretmanager',
    PORTAL_BASE_URL: 'https://portal.example.com',
    PUSH_AUDIENCE: url('webhook-dispatcher'),
    PUSH_SERVICE_ACCOUNT: PUSH_SA,
  },
}
const REQUIRED: Record<ServiceName, string[]> = {
  'edge-ingest': ['STORE_BACKEND', 'QUEUE_BACKEND', 'SECRETS_BACKEND'],
  'portal-api': [
    'STORE_BACKEND',
    'QUEUE_BACKEND',
    'TASKS_BACKEND',
    'SECRETS_BACKEND',
    'DISPATCHER_URL',
    'TASKS_SERVICE_ACCOUNT',
    'PORTAL_BASE_URL',
    'EDGE_BASE_URL_TEMPLATE',
  ],
  'upsert-worker': ['STORE_BACKEND', 'QUEUE_BACKEND', 'PUSH_AUDIENCE', 'PUSH_SERVICE_ACCOUNT'],
  'webhook-dispatcher': [
    'STORE_BACKEND',
    'QUEUE_BACKEND',
    'TASKS_BACKEND',
    'SECRETS_BACKEND',
    'PUSH_AUDIENCE',
    'PUSH_SERVICE_ACCOUNT',
    'DISPATCHER_URL',
    'TASKS_SERVICE_ACCOUNT',
    'PORTAL_BASE_URL',
  ],
}

const without = (env: Env, name: string): Env => Object.fromEntries(Object.entries(env).filter(([k]) => k !== name))

function configError(env: Env, service: ServiceName | null): ConfigError | null {
  try {
    loadConfig(env, service)
    return null
  } catch (err) {
    if (err instanceof ConfigError) return err
    throw err
  }
}

describe('production configuration per service', () => {
  for (const service of SERVICE_NAMES) {
    it(`${service}: starts with the deployed environment, and names each variable it cannot do without`, () => {
      const config = loadConfig(DEPLOYED[service], service)
      expect(config.service).toBe(service)
      for (const name of REQUIRED[service]) {
        const err = configError(without(DEPLOYED[service], name), service)
        expect({ name, variable: err?.variable }).toEqual({ name, variable: name })
      }
    })
  }

  it('each service needs only what it uses: edge-ingest has no DISPATCHER_URL or PUSH_*, the worker no tasks or secrets backend', () => {
    expect(configError(DEPLOYED['edge-ingest'], 'edge-ingest')).toBeNull()
    expect(DEPLOYED['edge-ingest'].DISPATCHER_URL).toBeUndefined()
    expect(configError(DEPLOYED['upsert-worker'], 'upsert-worker')).toBeNull()
    expect(DEPLOYED['upsert-worker'].TASKS_BACKEND).toBeUndefined()
    // the same environment is not enough for a process that is every service at once
    expect(configError(DEPLOYED['edge-ingest'], null)?.variable).toBe('TASKS_BACKEND')
  })

  it('an embedded backend in production is refused with a message that says why, not EACCES later', () => {
    const err = configError(without(DEPLOYED['upsert-worker'], 'STORE_BACKEND'), 'upsert-worker')
    expect(err?.message).toMatch(/STORE_BACKEND is not set \(the default is embedded\).*local development only.*STORE_BACKEND=firestore/)
    const chosen = configError({ ...DEPLOYED['portal-api'], SECRETS_BACKEND: 'embedded' }, 'portal-api')
    expect(chosen?.message).toMatch(/SECRETS_BACKEND is "embedded".*SECRETS_BACKEND=secretmanager/)
    expect(configError({ ...DEPLOYED['portal-api'], SECRETS_BACKEND: 'env' }, 'portal-api')?.variable).toBe('SECRETS_BACKEND')
  })

  it('refuses every local-only wiring variable in production without LOCAL_WIRING', () => {
    const values: Env = {
      FIRESTORE_EMULATOR_HOST: '127.0.0.1:8085',
      PUBSUB_EMULATOR_HOST: '127.0.0.1:8086',
      CLOUD_TASKS_EMULATOR_HOST: '127.0.0.1:8123',
      SECRET_MANAGER_EMULATOR_HOST: '127.0.0.1:8124',
      OIDC_ISSUER: 'http://127.0.0.1:8125',
      OIDC_JWKS_URL: 'http://127.0.0.1:8125/jwks',
      ALLOW_LOOPBACK_WEBHOOKS: 'true',
      LOCAL_FRONT_END_SECRET: 'a-per-run-secret-of-at-least-32-characters',
    }
    expect(Object.keys(values).sort()).toEqual([...LOCAL_WIRING_VARIABLES].sort())
    for (const [name, value] of Object.entries(values)) {
      const env = { ...DEPLOYED['webhook-dispatcher'], [name]: value }
      // the OIDC pair is refused on whichever of the two comes first; both are local-only
      const err = configError(
        name.startsWith('OIDC_') ? { ...env, OIDC_ISSUER: values.OIDC_ISSUER!, OIDC_JWKS_URL: values.OIDC_JWKS_URL! } : env,
        'webhook-dispatcher',
      )
      expect({ name, refused: err?.variable?.startsWith(name.startsWith('OIDC_') ? 'OIDC_' : name), message: err?.message }).toMatchObject({
        name,
        refused: true,
      })
      expect(err?.message).toMatch(/production/)
    }
    // all of them together are accepted with LOCAL_WIRING=true (all on loopback)
    const local = loadConfig({ ...DEPLOYED['webhook-dispatcher'], ...values, LOCAL_WIRING: 'true' }, 'webhook-dispatcher')
    expect(local).toMatchObject({
      localWiring: true,
      allowLoopbackWebhooks: true,
      oidc: { issuer: 'http://127.0.0.1:8125', jwksUrl: 'http://127.0.0.1:8125/jwks' },
      emulatorHosts: { firestore: '127.0.0.1:8085', pubsub: '127.0.0.1:8086', cloudTasks: '127.0.0.1:8123', secretManager: '127.0.0.1:8124' },
    })
  })

  it('LOCAL_WIRING is refused on Cloud Run (K_SERVICE), in any mode', () => {
    for (const nodeEnv of ['production', 'development']) {
      const err = configError({ ...DEPLOYED['upsert-worker'], NODE_ENV: nodeEnv, LOCAL_WIRING: 'true', K_SERVICE: 'upsert-worker' }, 'upsert-worker')
      expect(err?.variable).toBe('LOCAL_WIRING')
      expect(err?.message).toMatch(/Cloud Run/)
    }
    expect(configError({ ...DEPLOYED['upsert-worker'], K_SERVICE: 'upsert-worker' }, 'upsert-worker')).toBeNull()
  })

  it('with LOCAL_WIRING every stand-in must be on loopback', () => {
    const base = { ...DEPLOYED['webhook-dispatcher'], LOCAL_WIRING: 'true' }
    for (const [name, value] of [
      ['FIRESTORE_EMULATOR_HOST', '10.0.0.5:8085'],
      ['PUBSUB_EMULATOR_HOST', 'pubsub.internal:8086'],
      ['CLOUD_TASKS_EMULATOR_HOST', '192.168.1.1:8123'],
      ['SECRET_MANAGER_EMULATOR_HOST', '[2001:db8::1]:8124'],
      ['CLOUD_TASKS_EMULATOR_HOST', 'localhost.evil.example:8123'],
    ] as const) {
      const err = configError({ ...base, [name]: value }, 'webhook-dispatcher')
      expect({ name, value, variable: err?.variable }).toEqual({ name, value, variable: name })
      expect(err?.message).toMatch(/loopback/)
    }
    const issuer = configError({ ...base, OIDC_ISSUER: 'https://issuer.example.com', OIDC_JWKS_URL: 'http://127.0.0.1:1/jwks' }, 'webhook-dispatcher')
    expect(issuer?.variable).toBe('OIDC_ISSUER')
    const jwks = configError({ ...base, OIDC_ISSUER: 'http://127.0.0.1:1', OIDC_JWKS_URL: 'https://www.googleapis.com/oauth2/v3/certs' }, 'webhook-dispatcher')
    expect(jwks?.variable).toBe('OIDC_JWKS_URL')
    for (const host of ['127.0.0.2:1', 'localhost:1', '[::1]:1']) {
      expect(loadConfig({ ...base, CLOUD_TASKS_EMULATOR_HOST: host }, 'webhook-dispatcher').emulatorHosts.cloudTasks).toBe(host)
    }
  })

  it('an audience without its identity (or the reverse) is refused in any mode', () => {
    expect(configError({ NODE_ENV: 'development', PUSH_AUDIENCE: 'http://127.0.0.1:8082' }, 'upsert-worker')?.variable).toBe('PUSH_SERVICE_ACCOUNT')
    expect(configError({ NODE_ENV: 'development', TASKS_SERVICE_ACCOUNT: TASKS_SA }, 'webhook-dispatcher')?.variable).toBe('DISPATCHER_URL')
    expect(configError({ NODE_ENV: 'development', OIDC_JWKS_URL: 'http://127.0.0.1:1/jwks' }, null)?.variable).toBe('OIDC_ISSUER')
  })
})

/** Runs the real server.ts of `service` with `env` and returns its exit code and output. */
function runServer(service: ServiceName, env: Env): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'services', service, 'src', 'server.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PORT: '0', METADATA_SERVER_DETECTION: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    // a server that does start is a failure of this test: stop it rather than wait forever
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(guard)
      resolve({ code, output })
    })
  })
}

describe('server.ts stops at start-up (exit 78, EX_CONFIG) naming the variable', () => {
  const cases: Array<[ServiceName, Env, RegExp]> = [
    [
      'upsert-worker',
      without(DEPLOYED['upsert-worker'], 'PUSH_SERVICE_ACCOUNT'),
      /upsert-worker: configuration error: PUSH_SERVICE_ACCOUNT is required in production/,
    ],
    [
      'webhook-dispatcher',
      without(DEPLOYED['webhook-dispatcher'], 'PUSH_AUDIENCE'),
      /webhook-dispatcher: configuration error: PUSH_AUDIENCE is required in production/,
    ],
    [
      'webhook-dispatcher',
      without(without(DEPLOYED['webhook-dispatcher'], 'TASKS_SERVICE_ACCOUNT'), 'DISPATCHER_URL'),
      /webhook-dispatcher: configuration error: DISPATCHER_URL is required in production/,
    ],
    [
      'portal-api',
      without(without(DEPLOYED['portal-api'], 'DISPATCHER_URL'), 'TASKS_SERVICE_ACCOUNT'),
      /portal-api: configuration error: DISPATCHER_URL is required in production/,
    ],
    [
      'edge-ingest',
      without(DEPLOYED['edge-ingest'], 'STORE_BACKEND'),
      /edge-ingest: configuration error: STORE_BACKEND is not set \(the default is embedded\)/,
    ],
    ['portal-api', without(DEPLOYED['portal-api'], 'PORTAL_BASE_URL'), /portal-api: configuration error: PORTAL_BASE_URL is required in production/],
    [
      'webhook-dispatcher',
      without(DEPLOYED['webhook-dispatcher'], 'PORTAL_BASE_URL'),
      /webhook-dispatcher: configuration error: PORTAL_BASE_URL is required in production/,
    ],
    [
      'upsert-worker',
      { ...DEPLOYED['upsert-worker'], PUBSUB_EMULATOR_HOST: '127.0.0.1:8086' },
      /PUBSUB_EMULATOR_HOST is local-only wiring and refused in production/,
    ],
    ['upsert-worker', { ...DEPLOYED['upsert-worker'], LOCAL_WIRING: 'true', K_SERVICE: 'upsert-worker' }, /LOCAL_WIRING must not be set on Cloud Run/],
  ]
  it.each(cases)('%s with a broken environment: exit 78 and the message', { timeout: 120_000 }, async (service, env, message) => {
    const { code, output } = await runServer(service, env)
    expect({ code, output }).toEqual({ code: 78, output: expect.stringMatching(message) })
  })
})
