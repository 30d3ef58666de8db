/**
 * The platform in its deployed shape on this machine: everything `npm run start:cloud` starts,
 * in order, and stops again in reverse. See scripts/start-cloud.ts for the command itself. Once
 * all four services are ready, one that exits is replaced by a new instance (Cloud Run's
 * behaviour), again and again with a growing wait while new instances fail to get ready. Nothing
 * ends the run but a signal: the emulators keep the run's data in memory, so a crash loop leaves
 * that one service down and says so, and an emulator that dies is reported (emulator-watch.ts).
 */
import { appendFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { startEmulator, type RunningEmulator } from '../emulators.ts'
import { readDeployedShape, type CloudServiceName, type DeployedShape, type ServiceShape } from './deployed-shape.ts'
import { watchEmulators } from './emulator-watch.ts'
import { createIam, type Iam } from './iam.ts'
import { newFrontEndSecret } from './front-end.ts'
import { startOidcIssuer, type OidcIssuer } from './oidc-issuer.ts'
import { startPushRelay } from './push-relay.ts'
import { createTopicsAndSubscriptions, durationMs } from './pubsub-setup.ts'
import { openSecretStore, type SecretStore } from './secret-store.ts'
import { createSecretManagerStandIn } from './secret-manager-stand-in.ts'
import { createCloudTasksStandIn } from './cloud-tasks-stand-in.ts'
import { assertPortFree, startServiceProcess, superviseService, waitHealthy, type ServiceProcess, type SupervisedService } from './service-processes.ts'

export interface CloudOptions {
  root: string
  infraDir: string
  dataDir: string
  project: string
  ports: Record<CloudServiceName, number>
  edgeDomain: string
  edgeBaseUrlTemplate: string
  portalBaseUrl: string
  /** OPERATOR_TOKEN of start:cloud's environment: the latest operator token for this run */
  operatorToken: string | null
  /** OPERATOR_EVENTS_URL of start:cloud's environment: `var.operator_events_url`, as `terraform apply -var` would set it */
  operatorEventsUrl?: string | null
  /** emulators already running (host:port); the missing ones are started here */
  firestoreHost: string | null
  pubsubHost: string | null
  /** OTEL_EXPORTER_OTLP_ENDPOINT of start:cloud's environment: every service exports its spans there (docs/operations.md, "Traces") */
  otlpEndpoint?: string | null
  /**
   * LISTEN_HOST of start:cloud's environment; unset: 127.0.0.1. On Cloud Run a service listens on
   * its container's every interface, which only Google's front end reaches; here every interface
   * is this machine's network, and the stack's internal routes trust loopback callers.
   */
  listenHost?: string | null
  /** progress lines for the terminal */
  say(line: string): void
  /** aborts a start in progress (Ctrl-C while starting): what started is stopped, the promise rejects */
  abort?: AbortSignal
}

export interface CloudPlatform {
  shape: DeployedShape
  logDir: string
  store: SecretStore
  /** each service, restarted when its instance exits */
  services: SupervisedService[]
  emulators: { firestore: string; pubsub: string }
  close(): Promise<void>
}

/** Variables start:cloud itself gives every service (LOCAL_WIRING and the stand-ins' addresses). */
const WIRING = [
  'PORT',
  'LOCAL_WIRING',
  'FIRESTORE_EMULATOR_HOST',
  'PUBSUB_EMULATOR_HOST',
  'CLOUD_TASKS_EMULATOR_HOST',
  'SECRET_MANAGER_EMULATOR_HOST',
  'OIDC_ISSUER',
  'OIDC_JWKS_URL',
  'ALLOW_LOOPBACK_WEBHOOKS',
  'METADATA_SERVER_DETECTION',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'DATA_DIR',
  'LISTEN_HOST',
  'LOCAL_FRONT_END_SECRET',
] as const

/**
 * What Cloud Run does with `service_secret_env` at start: each variable gets the latest version
 * of its secret, which the service's account must be allowed to read (else no revision starts).
 */
function resolveSecretEnv(service: ServiceShape, store: SecretStore, iam: Iam): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [variable, secret] of Object.entries(service.secretEnv)) {
    if (variable in service.env) throw new Error(`${service.name}: ${variable} is both a plain and a secret variable in infra/service-env.tf`)
    if (!store.has(secret)) throw new Error(`${service.name}: ${variable} reads secret ${secret}, which infra/ does not declare (google_secret_manager_secret)`)
    if (!iam.allows(service.serviceAccount, 'secretmanager.versions.access', `secret:${secret}`)) {
      throw new Error(
        `${service.name}: ${variable} reads secret ${secret}, but infra/ grants ${service.serviceAccount} no secretmanager.versions.access on it (Cloud Run would not start the revision)`,
      )
    }
    out[variable] = store.version(secret, 'latest')!.version.data
  }
  return out
}

export async function startCloudPlatform(options: CloudOptions): Promise<CloudPlatform> {
  const logDir = join(options.dataDir, 'logs')
  mkdirSync(logDir, { recursive: true })
  const closers: Array<() => Promise<void>> = []
  const services: ServiceProcess[] = []
  const supervised: SupervisedService[] = []
  const close = async () => {
    // services first (they drain), then what they call, then the emulators
    await Promise.all(supervised.length > 0 ? supervised.map((s) => s.stop()) : services.map((s) => s.stop()))
    for (const c of closers.reverse()) await c().catch(() => {})
    closers.length = 0
  }
  try {
    const shape = await readDeployedShape({
      infraDir: options.infraDir,
      project: options.project,
      ports: options.ports,
      edgeDomain: options.edgeDomain,
      edgeBaseUrlTemplate: options.edgeBaseUrlTemplate,
      portalBaseUrl: options.portalBaseUrl,
      operatorEventsUrl: options.operatorEventsUrl ?? null,
    })
    // before anything starts: a taken port is the commonest failure (npm start still running)
    for (const service of shape.services) await assertPortFree(service.port, service.name)
    const iam = createIam(shape.grants, shape.customRoles)
    // only the roles the stand-ins check matter here (Firestore and Pub/Sub emulators check none)
    for (const g of shape.grants)
      if (g.condition && /secretmanager|cloudtasks|iam\.|run\.|roles\/(owner|editor)|^projects\//.test(g.role))
        options.say(`note: IAM condition not evaluated locally (grant applies unconditionally): ${g.condition}`)
    const store = openSecretStore(
      join(options.dataDir, 'secrets.json'),
      shape.secrets,
      options.operatorToken ? { 'operator-token': options.operatorToken } : {},
    )

    // emulators: the ones given, else our own on free ports (stopped by pid on close)
    const started: RunningEmulator[] = []
    closers.push(async () => {
      await Promise.all(started.map((e) => e.stop()))
    })
    const missing = (['firestore', 'pubsub'] as const).filter((k) => (k === 'firestore' ? options.firestoreHost : options.pubsubHost) === null)
    if (missing.length > 0) options.say(`starting the ${missing.join(' and ')} emulator${missing.length > 1 ? 's' : ''} (gcloud)…`)
    started.push(...(await Promise.all(missing.map((k) => startEmulator(k, logDir, options.project)))))
    const hostOf = (k: 'firestore' | 'pubsub') =>
      (k === 'firestore' ? options.firestoreHost : options.pubsubHost) ?? started.find((e) => e.name === k)!.hostPort
    const emulators = { firestore: hostOf('firestore'), pubsub: hostOf('pubsub') }
    options.abort?.throwIfAborted()

    // only the played front end knows it: no other process here can reach an internal route (front-end.ts)
    const frontEndSecret = newFrontEndSecret()
    const issuer: OidcIssuer = await startOidcIssuer()
    closers.push(() => issuer.close())
    const jsonLog = (file: string) => (line: object) => appendFileSync(join(logDir, file), `${JSON.stringify({ time: new Date().toISOString(), ...line })}\n`)

    // the Cloud Run service behind a local URL: its invoker grants apply to pushes and tasks
    const cloudRunServiceAt = (url: string) => shape.services.find((s) => url === s.url || url.startsWith(`${s.url}/`))?.name ?? null
    const pushSubscriptions = shape.subscriptions.filter((s) => s.push !== null)
    const relay = await startPushRelay(
      pushSubscriptions.map((s) => ({
        subscription: s.name,
        target: s.push!.endpoint,
        service: cloudRunServiceAt(s.push!.endpoint),
        oidc: s.push!.oidc,
        ackDeadlineSeconds: s.ackDeadlineSeconds,
        wrapped: s.push!.noWrapper === null,
        retry: s.retryPolicy
          ? { minimumBackoffMs: durationMs(s.retryPolicy.minimumBackoff), maximumBackoffMs: durationMs(s.retryPolicy.maximumBackoff) }
          : null,
        deadLetter: s.deadLetterPolicy ? { topic: s.deadLetterPolicy.deadLetterTopic, maxDeliveryAttempts: s.deadLetterPolicy.maxDeliveryAttempts } : null,
      })),
      issuer,
      iam,
      join(logDir, 'push-relay.log'),
      { emulatorHost: emulators.pubsub, project: shape.project, frontEndSecret },
    )
    closers.push(() => relay.close())
    await createTopicsAndSubscriptions({
      emulatorHost: emulators.pubsub,
      project: shape.project,
      topics: shape.topics,
      subscriptions: shape.subscriptions,
      pushEndpointFor: (name) => relay.endpointFor(name),
    })

    const tasks = createCloudTasksStandIn({ project: shape.project, issuer, iam, log: jsonLog('cloud-tasks.log'), cloudRunServiceAt, frontEndSecret })
    closers.push(() => tasks.close())
    for (const q of shape.queues) {
      tasks.declareQueue(
        `projects/${shape.project}/locations/${q.location}/queues/${q.name}`,
        q.rateLimits,
        q.retryConfig
          ? {
              maxAttempts: q.retryConfig.maxAttempts,
              minBackoffMs: q.retryConfig.minBackoffSeconds * 1000,
              maxBackoffMs: q.retryConfig.maxBackoffSeconds * 1000,
              maxDoublings: q.retryConfig.maxDoublings,
            }
          : null,
      )
    }
    const secrets = createSecretManagerStandIn({ project: shape.project, store, iam, log: jsonLog('secret-manager.log') })
    closers.push(() => secrets.close())

    // each service: exactly Terraform's environment, its secrets, and the local wiring
    const envs = new Map<string, Record<string, string>>()
    for (const service of shape.services) {
      for (const name of WIRING) {
        if (name in service.env || name in service.secretEnv)
          throw new Error(`${service.name}: infra/service-env.tf sets ${name}, which is the local wiring's (or Cloud Run's) to set`)
      }
      const tasksListener = await tasks.listenFor(service.serviceAccount)
      const secretsListener = await secrets.listenFor(service.serviceAccount)
      envs.set(service.name, {
        ...service.env,
        ...resolveSecretEnv(service, store, iam),
        PORT: String(service.port),
        LISTEN_HOST: options.listenHost || '127.0.0.1',
        LOCAL_WIRING: 'true',
        FIRESTORE_EMULATOR_HOST: emulators.firestore,
        PUBSUB_EMULATOR_HOST: emulators.pubsub,
        CLOUD_TASKS_EMULATOR_HOST: `127.0.0.1:${tasksListener.port}`,
        SECRET_MANAGER_EMULATOR_HOST: `127.0.0.1:${secretsListener.port}`,
        OIDC_ISSUER: issuer.issuer,
        OIDC_JWKS_URL: issuer.jwksUrl,
        ALLOW_LOOPBACK_WEBHOOKS: 'true',
        // what Cloud Run's ingress and invoker check give: only the front end (relay, stand-in) gets in
        ...(service.env.INTERNAL_AUTH === 'front-end' ? { LOCAL_FRONT_END_SECRET: frontEndSecret } : {}),
        // no Google metadata server here: the client libraries must not probe for one
        METADATA_SERVER_DETECTION: 'none',
        // the developer's collector, else each service keeps its last spans in DATA_DIR/traces
        ...(options.otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint } : { DATA_DIR: options.dataDir }),
      })
    }

    options.abort?.throwIfAborted()
    const start = (service: ServiceShape, continueLogWith?: string) =>
      startServiceProcess({
        root: options.root,
        name: service.name,
        port: service.port,
        env: envs.get(service.name)!,
        logDir,
        ...(continueLogWith ? { continueLogWith } : {}),
      })
    for (const service of shape.services) services.push(start(service))
    // all four start together; the first to fail is reported (the others are stopped by close):
    // a service that never got ready is a failure to start, not a crash, and is not restarted
    await Promise.all(services.map((s) => waitHealthy(s, 120_000, options.abort)))

    let running = true
    for (const [i, service] of shape.services.entries()) {
      supervised.push(
        superviseService(services[i]!, (note) => start(service, note), {
          say: options.say,
          crashLoop: (reason) => {
            if (!running) return
            options.say(
              `${reason}\n${service.name} is in a crash loop and stays down until start:cloud runs again; the emulators and the other services keep running ` +
                "(the emulators hold this run's data in memory: stopping them would lose it). Ctrl-C stops everything.",
            )
          },
        }),
      )
    }
    // an emulator cannot be started again without losing its data: say so; the services' /readyz fail
    const watcher = watchEmulators(emulators, options.say)
    closers.push(async () => watcher.stop())
    return {
      shape,
      logDir,
      store,
      services: supervised,
      emulators,
      close: async () => {
        running = false
        await close()
      },
    }
  } catch (err) {
    await close()
    throw err
  }
}
