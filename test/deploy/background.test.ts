import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { SERVICE_NAMES } from '@lsv/shared/config/services.ts'
import { backgroundFor, isIdle, loadBackground } from '@lsv/shared/platform/background.ts'
import { createPlatformDeps } from '@lsv/shared/platform/deps.ts'
import { edgeIngest } from '../../services/edge-ingest/src/service.ts'
import { portalApi } from '../../services/portal-api/src/service.ts'
import { upsertWorker } from '../../services/upsert-worker/src/service.ts'
import { webhookDispatcher } from '../../services/webhook-dispatcher/src/service.ts'
import pino from 'pino'
import { freePort } from '../../scripts/lib/free-port.ts'
import { emulators, randomSuffix, tempDataDir } from '../helpers/embedded.ts'

/**
 * Background consumers run only where the deployment says so (defect 4): with Pub/Sub, Pub/Sub
 * pushes to the services, so no service process pulls (Terraform creates no pull subscription
 * for contact-batches or visit-events); the single-process `npm start` pulls because nobody
 * pushes to it; the task runner runs only with embedded tasks.
 */
const ROOT = join(import.meta.dirname, '..', '..')

describe('backgroundFor: the one place that decides', () => {
  const config = (queueBackend: 'embedded' | 'pubsub', tasksBackend: 'embedded' | 'cloudtasks') => ({ queueBackend, tasksBackend })

  it('a service process with Pub/Sub pulls nothing; with Cloud Tasks runs no task runner', () => {
    for (const service of SERVICE_NAMES) {
      expect({ service, plan: backgroundFor(service, config('pubsub', 'cloudtasks')) }).toEqual({
        service,
        plan: { pull: [], taskRunner: false, thread: false },
      })
    }
    expect(backgroundFor('webhook-dispatcher', config('pubsub', 'embedded'))).toEqual({ pull: [], taskRunner: true, thread: false })
  })

  it('a service process pulls its own topic from the embedded queue only', () => {
    expect(backgroundFor('upsert-worker', config('embedded', 'embedded'))).toEqual({ pull: ['contact-batches'], taskRunner: false, thread: false })
    expect(backgroundFor('webhook-dispatcher', config('embedded', 'embedded'))).toEqual({ pull: ['visit-events'], taskRunner: true, thread: false })
    expect(backgroundFor('webhook-dispatcher', config('embedded', 'cloudtasks'))).toEqual({ pull: ['visit-events'], taskRunner: false, thread: false })
    expect(backgroundFor('edge-ingest', config('embedded', 'embedded'))).toEqual({ pull: [], taskRunner: false, thread: false })
    expect(backgroundFor('portal-api', config('embedded', 'embedded'))).toEqual({ pull: [], taskRunner: false, thread: false })
  })

  it('the local stack pulls whatever its queue is (no push subscription points at it), each background on a thread of its own', () => {
    expect(backgroundFor('upsert-worker', config('pubsub', 'embedded'), 'local-stack')).toEqual({ pull: ['contact-batches'], taskRunner: false, thread: true })
    expect(backgroundFor('webhook-dispatcher', config('pubsub', 'embedded'), 'local-stack')).toEqual({ pull: ['visit-events'], taskRunner: true, thread: true })
    expect(backgroundFor('upsert-worker', config('embedded', 'embedded'), 'local-stack')).toEqual({
      pull: ['contact-batches'],
      taskRunner: false,
      thread: true,
    })
    // nothing to run, no thread
    expect(backgroundFor('edge-ingest', config('embedded', 'embedded'), 'local-stack')).toEqual({ pull: [], taskRunner: false, thread: false })
  })

  it('a service with something to run in the background names the module that exports it; the others none', async () => {
    for (const def of [edgeIngest, portalApi, upsertWorker, webhookDispatcher]) {
      const plan = backgroundFor(def.name, config('embedded', 'embedded'), 'local-stack')
      if (isIdle(plan)) {
        expect(def.backgroundModule, def.name).toBeUndefined()
        continue
      }
      expect(def.backgroundModule, def.name).toBeDefined()
      expect(typeof (await loadBackground(def.backgroundModule!)), def.name).toBe('function')
    }
  })

  it('the deployed environment of the dispatcher plans nothing in the background', () => {
    const deployed = loadConfig(
      {
        NODE_ENV: 'production',
        GOOGLE_CLOUD_PROJECT: 'lsv-prod',
        STORE_BACKEND: 'firestore',
        QUEUE_BACKEND: 'pubsub',
        SECRETS_BACKEND: 'secretmanager',
        TASKS_BACKEND: 'cloudtasks',
        DISPATCHER_URL: 'https://d.example',
        TASKS_SERVICE_ACCOUNT: 't@x.iam.gserviceaccount.com',
        PUSH_AUDIENCE: 'https://d.example',
        PUSH_SERVICE_ACCOUNT: 'p@x.iam.gserviceaccount.com',
        PORTAL_BASE_URL: 'https://portal.example',
      },
      'webhook-dispatcher',
    )
    expect(backgroundFor('webhook-dispatcher', deployed)).toEqual({ pull: [], taskRunner: false, thread: false })
  })
})

describe.skipIf(!emulators.pubsub)('webhook-dispatcher server.ts against the Pub/Sub emulator', () => {
  it('starts no pull consumer: no visit-events-sub is created or pulled', { timeout: 120_000 }, async () => {
    const project = `demo-bg-${randomSuffix(4)}`
    const data = tempDataDir()
    const port = await freePort()
    const child = spawn(process.execPath, [join(ROOT, 'services', 'webhook-dispatcher', 'src', 'server.ts')], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'development',
        PORT: String(port),
        DATA_DIR: data.dir,
        LOG_LEVEL: 'warn',
        METADATA_SERVER_DETECTION: 'none',
        QUEUE_BACKEND: 'pubsub',
        PUBSUB_EMULATOR_HOST: emulators.pubsub!,
        GOOGLE_CLOUD_PROJECT: project,
        STORE_BACKEND: 'embedded',
        TASKS_BACKEND: 'embedded',
        SECRETS_BACKEND: 'embedded',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => (output += d))
    child.stderr.on('data', (d) => (output += d))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      // serve() starts the background before it listens: once /healthz answers, a consumer would exist
      let healthy = false
      for (let i = 0; i < 600 && !healthy && child.exitCode === null; i++) {
        healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.status === 200,
          () => false,
        )
        if (!healthy) await new Promise((r) => setTimeout(r, 100))
      }
      expect({ healthy, output }).toMatchObject({ healthy: true })
      const res = await fetch(`http://${emulators.pubsub}/v1/projects/${project}/subscriptions`)
      expect(res.status).toBe(200)
      const names = ((await res.json()) as { subscriptions?: Array<{ name: string }> }).subscriptions?.map((s) => s.name) ?? []
      expect(names).toEqual([])
      const sub = await fetch(`http://${emulators.pubsub}/v1/projects/${project}/subscriptions/visit-events-sub`)
      expect(sub.status).toBe(404)
    } finally {
      child.kill('SIGTERM')
      await exited
      data.cleanup()
    }
  })
})

describe.skipIf(!emulators.pubsub)('publishing in the deployed shape (LOCAL_WIRING) against the Pub/Sub emulator', () => {
  const subscriptionsOf = async (project: string) => {
    const res = await fetch(`http://${emulators.pubsub}/v1/projects/${project}/subscriptions`)
    return (((await res.json()) as { subscriptions?: Array<{ name: string }> }).subscriptions ?? []).map((s) => s.name.split('/').pop())
  }
  const publishOnce = async (localWiring: boolean) => {
    const project = `demo-pub-${randomSuffix(4)}`
    const data = tempDataDir()
    // Terraform's topic exists (start:cloud creates it from infra/); the publisher only publishes
    expect((await fetch(`http://${emulators.pubsub}/v1/projects/${project}/topics/visit-events`, { method: 'PUT' })).status).toBe(200)
    const config = loadConfig(
      {
        NODE_ENV: 'development',
        DATA_DIR: data.dir,
        GOOGLE_CLOUD_PROJECT: project,
        PUBSUB_EMULATOR_HOST: emulators.pubsub!,
        QUEUE_BACKEND: 'pubsub',
        STORE_BACKEND: 'embedded',
        ...(localWiring ? { LOCAL_WIRING: 'true' } : {}),
      },
      'edge-ingest',
    )
    const deps = await createPlatformDeps(config, pino({ level: 'silent' }))
    try {
      await deps.queue.publish('visit-events', Buffer.from('{}'))
      return await subscriptionsOf(project)
    } finally {
      await deps.close()
      data.cleanup()
    }
  }

  it('creates no subscription (Terraform owns them), where the plain emulator set-up creates its pull subscriptions', { timeout: 60_000 }, async () => {
    expect(await publishOnce(true)).toEqual([])
    expect((await publishOnce(false)).sort()).toEqual(['visit-events-dead-letter-alerts', 'visit-events-dead-letter-sub', 'visit-events-sub'])
  })
})
